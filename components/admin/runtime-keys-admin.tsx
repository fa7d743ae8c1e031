"use client";

import { useState, type FormEvent } from "react";
import type { RuntimeKeyInfo } from "@/lib/identity/runtime-keys";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { TextField } from "../ui/field";
import { ConfirmDialog } from "./confirm-dialog";
import { fillCurl } from "./curl-template";
import { CommandExample, ShownOnceDialog } from "./shown-once";
import { useCollection, useCollectionMutation } from "./use-collection";

type Created = { key: string; prefix: string; runtime: string };

function CreateKeyDialog({
  runtimes,
  onClose,
  onCreated,
}: {
  runtimes: string[];
  onClose: () => void;
  onCreated: (created: Created) => void;
}) {
  const create = useCollectionMutation(queryKeys.admin.runtimeKeys, {
    mutationFn: (body: { runtime: string; name: string }) => api.post("/api/v1/admin/runtime-keys", { body }),
    onSuccess: onCreated,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({
      runtime: String(form.get("runtime") ?? "").trim(),
      name: String(form.get("name") ?? "").trim() || "default",
    });
  };
  return (
    <Dialog
      open
      onOpenChange={(open) => (open ? null : onClose())}
      title="Create a runtime key"
      description="A runtime sends its attempt records with this key, and sees only its own runtime's invocations."
    >
      <form onSubmit={submit} className="space-y-4">
        <TextField
          label="Runtime"
          name="runtime"
          required
          list="known-runtimes"
          autoComplete="off"
          placeholder="billing-agent"
          hint={
            runtimes.length
              ? "Pick an existing runtime to add a key to it (e.g. to rotate keys); a new name creates a new runtime."
              : "A new name creates a new runtime."
          }
        />
        <datalist id="known-runtimes">
          {runtimes.map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
        <TextField
          label="Key name"
          name="name"
          placeholder="prod-eu-1"
          autoComplete="off"
          hint="Where the key will live, so you know which one to revoke later."
        />
        <ErrorAlert error={create.error} look="box" />
        <DialogActions label="Create key" pendingLabel="Creating…" pending={create.isPending} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

function KeyState({ k }: { k: RuntimeKeyInfo }) {
  if (k.revoked_at) {
    return (
      <span className="inline-flex items-center gap-1 text-slate-600">
        <span aria-hidden="true">⊘</span>Revoked {formatUtc(k.revoked_at, { seconds: false })}
      </span>
    );
  }
  return (
    <span className="inline-flex items-center gap-1 text-emerald-800">
      <span aria-hidden="true">●</span>Active
    </span>
  );
}

export function RuntimeKeysAdmin({
  initial,
  runtimes,
  curlTemplate,
}: {
  initial: RuntimeKeyInfo[];
  runtimes: string[];
  curlTemplate: string;
}) {
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [revoking, setRevoking] = useState<RuntimeKeyInfo | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.runtimeKeys,
    queryFn: () => api.get("/api/v1/admin/runtime-keys"),
    initialData: { items: initial },
  });
  const revoke = useCollectionMutation(queryKeys.admin.runtimeKeys, {
    mutationFn: (prefix: string) => api.post("/api/v1/admin/runtime-keys/{prefix}/revoke", { params: { prefix } }),
    onSuccess: ({ key, already_revoked }) => {
      setRevoking(null);
      setNotice(
        already_revoked
          ? `${key.prefix} had already been revoked.`
          : `${key.prefix} is revoked: its next request gets 401 KEY_REVOKED.`,
      );
    },
  });
  // Newest first: the key just made, or the one to rotate, is at the top.
  const keys = [...data.items].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const knownRuntimes = [...new Set([...runtimes, ...keys.map((k) => k.runtime)])].sort();

  return (
    <section aria-labelledby="keys-heading" className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h1 id="keys-heading" className="text-xl font-semibold">
            Runtime keys
          </h1>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            Agent runtimes send attempt records to <span className="font-mono">POST /api/v1/envelopes</span> with one of
            these keys, and can read only their own runtime&apos;s invocations. Settle stores a hash: a key is shown
            once, when it is created. To rotate, create a new key for the same runtime, deploy it, then revoke the old
            one.
          </p>
        </div>
        <Button variant="primary" onClick={() => setCreating(true)}>
          Create key
        </Button>
      </div>
      <p role="status" aria-live="polite" className="text-sm text-emerald-800">
        {notice}
      </p>
      <ErrorAlert error={error} prefix="Could not refresh the list:" />

      {keys.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-700">
          No runtime keys yet. Create one, give it to your agent runtime, and its records start arriving in the queue.
        </div>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Runtime keys</caption>
            <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="px-4 py-2 font-medium">
                  Prefix
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  Runtime
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  Name
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  Created
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  Last used
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  State
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {keys.map((k) => (
                <tr key={k.prefix} data-testid="key-row" className={k.revoked_at ? "bg-slate-50 text-slate-500" : ""}>
                  <td className="whitespace-nowrap px-4 py-2 font-mono text-xs">{k.prefix}</td>
                  <td className="px-4 py-2 font-medium">{k.runtime}</td>
                  <td className="px-4 py-2">{k.name}</td>
                  <td className="whitespace-nowrap px-4 py-2">{formatUtc(k.created_at, { seconds: false })}</td>
                  <td className="whitespace-nowrap px-4 py-2">
                    {k.last_used_at ? formatUtc(k.last_used_at, { seconds: false }) : "never"}
                  </td>
                  <td className="whitespace-nowrap px-4 py-2">
                    <KeyState k={k} />
                  </td>
                  <td className="px-4 py-2 text-right">
                    {k.revoked_at ? null : (
                      <Button
                        size="sm"
                        variant="dangerGhost"
                        onClick={() => {
                          revoke.reset();
                          setRevoking(k);
                        }}
                        aria-label={`Revoke ${k.prefix}`}
                      >
                        Revoke
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {creating ? (
        <CreateKeyDialog
          runtimes={knownRuntimes}
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false);
            setCreated(c);
            setNotice(`Created ${c.prefix} for runtime ${c.runtime}.`);
          }}
        />
      ) : null}
      {created ? (
        <ShownOnceDialog
          title={`Key for runtime ${created.runtime}`}
          label="Runtime ingest key"
          secret={created.key}
          onClose={() => setCreated(null)}
        >
          <CommandExample
            label="Send a first record with it (an unknown outcome, so it shows up in the queue):"
            command={fillCurl(curlTemplate, window.location.origin, created.key)}
          />
        </ShownOnceDialog>
      ) : null}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke ${revoking.prefix}?`}
          description={`Runtime ${revoking.runtime} (${revoking.name}) gets 401 KEY_REVOKED from its next request on, and its records stop arriving until it has a new key. This cannot be undone.`}
          confirmLabel="Revoke key"
          pending={revoke.isPending}
          error={revoke.error}
          onConfirm={() => revoke.mutate(revoking.prefix)}
          onCancel={() => setRevoking(null)}
        />
      ) : null}
    </section>
  );
}
