"use client";

import { useState } from "react";
import type { RuntimeKeyInfo } from "@/lib/identity/runtime-keys";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { actionsColumn, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { DialogButton, fieldText, FormDialog, type DialogProps } from "../ui/dialog";
import { TextField } from "../ui/field";
import { EmptyState, PageSection, StateLabel } from "../ui/page";
import { fillCurl } from "./curl-template";
import { RevokeButton } from "./revoke-button";
import { CommandExample, ShownOnceDialog } from "./shown-once";
import { useCollection, useCollectionMutation } from "./use-collection";

type Created = { key: string; prefix: string; runtime: string };
const keyRow: RowSpec<RuntimeKeyInfo> = {
  key: (k) => k.prefix,
  testId: "key-row",
  dimmed: (k) => Boolean(k.revoked_at),
};

function CreateKeyDialog({ runtimes, onClose, onDone }: { runtimes: string[] } & DialogProps<Created>) {
  const create = useCollectionMutation(queryKeys.admin.runtimeKeys, {
    mutationFn: (body: { runtime: string; name: string }) => api.post("/api/v1/admin/runtime-keys", { body }),
    onSuccess: onDone,
  });
  return (
    <FormDialog
      title="Create a runtime key"
      description="A runtime sends its attempt records with this key, and sees only its own runtime's invocations."
      submitLabel="Create key"
      pendingLabel="Creating…"
      step={create}
      onSubmit={(form) =>
        create.mutate({ runtime: fieldText(form, "runtime"), name: fieldText(form, "name") || "default" })
      }
      onClose={onClose}
    >
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
    </FormDialog>
  );
}

function KeyState({ k }: { k: RuntimeKeyInfo }) {
  return k.revoked_at ? (
    <StateLabel state="revoked">{formatUtc(k.revoked_at, { seconds: false })}</StateLabel>
  ) : (
    <StateLabel state="active" />
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
  const [created, setCreated] = useState<Created | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.runtimeKeys,
    queryFn: () => api.get("/api/v1/admin/runtime-keys"),
    initialData: { items: initial },
  });
  const revoke = useCollectionMutation(queryKeys.admin.runtimeKeys, {
    mutationFn: (prefix: string) => api.post("/api/v1/admin/runtime-keys/{prefix}/revoke", { params: { prefix } }),
    onSuccess: ({ key, already_revoked }) =>
      setNotice(
        already_revoked
          ? `${key.prefix} had already been revoked.`
          : `${key.prefix} is revoked: its next request gets 401 KEY_REVOKED.`,
      ),
  });
  // Newest first: the key just made, or the one to rotate, is at the top.
  const keys = [...data.items].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const knownRuntimes = [...new Set([...runtimes, ...keys.map((k) => k.runtime)])].sort();
  const columns: Array<Column<RuntimeKeyInfo>> = [
    { header: "Prefix", className: "nowrap mono", cell: (k) => k.prefix },
    { header: "Runtime", className: "font-medium", cell: (k) => k.runtime },
    { header: "Name", cell: (k) => k.name },
    { header: "Created", className: "nowrap", cell: (k) => formatUtc(k.created_at, { seconds: false }) },
    {
      header: "Last used",
      className: "nowrap",
      cell: (k) => (k.last_used_at ? formatUtc(k.last_used_at, { seconds: false }) : "never"),
    },
    { header: "State", className: "nowrap", cell: (k) => <KeyState k={k} /> },
    actionsColumn((k) =>
      k.revoked_at ? null : (
        <RevokeButton
          prefix={k.prefix}
          what="key"
          consequence={`Runtime ${k.runtime} (${k.name}) gets 401 KEY_REVOKED from its next request on, and its records stop arriving until it has a new key. This cannot be undone.`}
          revoke={revoke}
        />
      ),
    ),
  ];

  return (
    <PageSection
      id="keys-heading"
      title="Runtime keys"
      description={
        <>
          Agent runtimes send attempt records to <span className="font-mono">POST /api/v1/envelopes</span> with one of
          these keys, and can read only their own runtime&apos;s invocations. Settle stores a hash: a key is shown once,
          when it is created. To rotate, create a new key for the same runtime, deploy it, then revoke the old one.
        </>
      }
      action={
        <DialogButton<Created>
          variant="primary"
          dialog={(props) => <CreateKeyDialog runtimes={knownRuntimes} {...props} />}
          onDone={(c) => {
            setCreated(c);
            setNotice(`Created ${c.prefix} for runtime ${c.runtime}.`);
          }}
        >
          Create key
        </DialogButton>
      }
      notice={notice}
    >
      <DataTable
        caption="Runtime keys"
        columns={columns}
        rows={keys}
        row={keyRow}
        error={error}
        empty={
          <EmptyState>
            No runtime keys yet. Create one, give it to your agent runtime, and its records start arriving in the queue.
          </EmptyState>
        }
      />

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
    </PageSection>
  );
}
