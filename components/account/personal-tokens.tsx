"use client";

import { useState, type FormEvent } from "react";
import type { PersonalTokenInfo } from "@/lib/identity/personal-tokens";
import { queryKeys } from "@/lib/query/keys";
import { ConfirmDialog } from "../admin/confirm-dialog";
import { CommandExample, ShownOnceDialog } from "../admin/shown-once";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCurrentUser } from "../current-user";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/error-alert";
import { SelectField, TextField } from "../ui/field";

const LIFETIMES = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "366", label: "1 year" },
];

type Created = PersonalTokenInfo & { token: string };

export function PersonalTokens({ initial }: { initial: PersonalTokenInfo[] }) {
  const me = useCurrentUser();
  const [created, setCreated] = useState<Created | null>(null);
  const [revoking, setRevoking] = useState<PersonalTokenInfo | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.me.tokens,
    queryFn: () => api.get("/api/v1/me/tokens"),
    initialData: { items: initial },
  });
  const create = useCollectionMutation(queryKeys.me.tokens, {
    mutationFn: (input: { name: string; expires_in_days: number }) => api.post("/api/v1/me/tokens", { body: input }),
    onSuccess: (token) => {
      setCreated(token);
      setNotice(`Created ${token.prefix} (${token.name}).`);
    },
  });
  const revoke = useCollectionMutation(queryKeys.me.tokens, {
    mutationFn: (prefix: string) => api.post("/api/v1/me/tokens/{prefix}/revoke", { params: { prefix } }),
    onSuccess: ({ token, already_revoked }) => {
      setRevoking(null);
      setNotice(
        already_revoked
          ? `${token.prefix} had already been revoked.`
          : `${token.prefix} is revoked: it gets 401 from its next request on.`,
      );
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const fields = new FormData(form);
    create.mutate(
      { name: String(fields.get("name") ?? "").trim(), expires_in_days: Number(fields.get("expires_in_days") ?? 90) },
      { onSuccess: () => form.reset() },
    );
  };
  const tokens = data.items;
  const canAct = me.role !== "viewer";

  return (
    <section aria-labelledby="tokens-heading" className="space-y-6">
      <div>
        <h1 id="tokens-heading" className="text-xl font-semibold">
          Personal access tokens
        </h1>
        <p className="mt-1 max-w-3xl text-sm text-slate-600">
          A token acts as you, with your role ({me.role})
          {canAct ? ": it can read and take the same actions you can in the console" : ": it can read, like you"}. Use
          it as <span className="font-mono">Authorization: Bearer stl_pat_…</span> from scripts. It stops working when
          it expires, when you revoke it, or when an admin deactivates you. Settle keeps only a hash: a token is shown
          once, when you create it. Tokens are created only here, signed in: a token cannot create another.
        </p>
      </div>

      <form
        onSubmit={submit}
        className="flex max-w-xl items-end gap-2 rounded-lg border border-slate-200 bg-white p-4 shadow-sm"
      >
        <div className="flex-1">
          <TextField
            label="New token name"
            name="name"
            required
            maxLength={100}
            placeholder="nightly-reconcile-script"
            autoComplete="off"
            hint="What will use it, so you know which to revoke."
          />
        </div>
        <div className="w-32">
          <SelectField
            label="Expires in"
            name="expires_in_days"
            defaultValue="90"
            options={LIFETIMES}
            hint="Then it stops."
          />
        </div>
        <Button type="submit" variant="primary" disabled={create.isPending} className="mb-5">
          {create.isPending ? "Creating…" : "Create token"}
        </Button>
      </form>
      <ErrorAlert error={create.error} />
      <p role="status" aria-live="polite" className="text-sm text-emerald-800">
        {notice}
      </p>
      <ErrorAlert error={error} prefix="Could not refresh the list:" />

      {tokens.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-700">
          You have no tokens. Create one to script what you do in the console, for example to list the queue from a cron
          job.
        </div>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Your personal access tokens</caption>
            <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="px-4 py-2 font-medium">
                  Prefix
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
                  Expires
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
              {tokens.map((t) => (
                <tr key={t.prefix} data-testid="token-row" className={t.revoked_at ? "bg-slate-50 text-slate-500" : ""}>
                  <td className="whitespace-nowrap px-4 py-2 font-mono text-xs">{t.prefix}</td>
                  <td className="px-4 py-2 font-medium">{t.name}</td>
                  <td className="whitespace-nowrap px-4 py-2">{formatUtc(t.created_at, { seconds: false })}</td>
                  <td className="whitespace-nowrap px-4 py-2">
                    {t.last_used_at ? formatUtc(t.last_used_at, { seconds: false }) : "never"}
                  </td>
                  <td className="whitespace-nowrap px-4 py-2">{formatUtc(t.expires_at, { seconds: false })}</td>
                  <td className="whitespace-nowrap px-4 py-2">
                    {t.revoked_at ? (
                      <span className="inline-flex items-center gap-1 text-slate-600">
                        <span aria-hidden="true">⊘</span>Revoked {formatUtc(t.revoked_at, { seconds: false })}
                      </span>
                    ) : t.expired ? (
                      <span className="inline-flex items-center gap-1 text-amber-800">
                        <span aria-hidden="true">⌛</span>Expired
                      </span>
                    ) : (
                      <span className="inline-flex items-center gap-1 text-emerald-800">
                        <span aria-hidden="true">●</span>Active
                      </span>
                    )}
                  </td>
                  <td className="px-4 py-2 text-right">
                    {t.revoked_at || t.expired ? null : (
                      <Button
                        size="sm"
                        variant="dangerGhost"
                        onClick={() => {
                          revoke.reset();
                          setRevoking(t);
                        }}
                        aria-label={`Revoke ${t.prefix}`}
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

      {created ? (
        <ShownOnceDialog
          title={`Token ${created.name}`}
          label="Personal access token"
          secret={created.token}
          onClose={() => setCreated(null)}
        >
          <CommandExample
            label="Try it: list the invocations that need a person"
            command={`curl -sS -H "Authorization: Bearer ${created.token}" \\\n  "${window.location.origin}/api/v1/invocations?status=outcome_unknown,stalled"`}
          />
        </ShownOnceDialog>
      ) : null}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke ${revoking.prefix}?`}
          description={`Anything using "${revoking.name}" gets 401 from its next request on. This cannot be undone; create a new token if you need one.`}
          confirmLabel="Revoke token"
          pending={revoke.isPending}
          error={revoke.error}
          onConfirm={() => revoke.mutate(revoking.prefix)}
          onCancel={() => setRevoking(null)}
        />
      ) : null}
    </section>
  );
}
