"use client";

import { useState, type FormEvent } from "react";
import type { PersonalTokenInfo } from "@/lib/identity/personal-tokens";
import { queryKeys } from "@/lib/query/keys";
import { RevokeButton } from "../admin/revoke-button";
import { CommandExample, ShownOnceDialog } from "../admin/shown-once";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCurrentUser } from "../current-user";
import { SubmitButton } from "../ui/button";
import { actionsColumn, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { fieldText } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { SelectField, TextField } from "../ui/field";
import { EmptyState, PageSection, StateLabel } from "../ui/page";

const LIFETIMES = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "366", label: "1 year" },
];

type Created = PersonalTokenInfo & { token: string };

function TokenState({ t }: { t: PersonalTokenInfo }) {
  if (t.revoked_at) return <StateLabel state="revoked">{formatUtc(t.revoked_at, { seconds: false })}</StateLabel>;
  return t.expired ? <StateLabel state="expired" /> : <StateLabel state="active" />;
}

const tokenRow: RowSpec<PersonalTokenInfo> = {
  key: (t) => t.prefix,
  testId: "token-row",
  dimmed: (t) => Boolean(t.revoked_at),
};
const when = (at: string | null) => (at ? formatUtc(at, { seconds: false }) : "never");

export function PersonalTokens({ initial }: { initial: PersonalTokenInfo[] }) {
  const me = useCurrentUser();
  const [created, setCreated] = useState<Created | null>(null);
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
    onSuccess: ({ token, already_revoked }) =>
      setNotice(
        already_revoked
          ? `${token.prefix} had already been revoked.`
          : `${token.prefix} is revoked: it gets 401 from its next request on.`,
      ),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const fields = new FormData(form);
    create.mutate(
      { name: fieldText(fields, "name"), expires_in_days: Number(fields.get("expires_in_days") ?? 90) },
      { onSuccess: () => form.reset() },
    );
  };
  const canAct = me.role !== "viewer";
  const columns: Array<Column<PersonalTokenInfo>> = [
    { header: "Prefix", className: "nowrap mono", cell: (t) => t.prefix },
    { header: "Name", className: "font-medium", cell: (t) => t.name },
    { header: "Created", className: "nowrap", cell: (t) => when(t.created_at) },
    { header: "Last used", className: "nowrap", cell: (t) => when(t.last_used_at) },
    { header: "Expires", className: "nowrap", cell: (t) => when(t.expires_at) },
    { header: "State", className: "nowrap", cell: (t) => <TokenState t={t} /> },
    actionsColumn((t) =>
      t.revoked_at || t.expired ? null : (
        <RevokeButton
          prefix={t.prefix}
          what="token"
          consequence={`Anything using "${t.name}" gets 401 from its next request on. This cannot be undone; create a new token if you need one.`}
          revoke={revoke}
        />
      ),
    ),
  ];

  return (
    <PageSection
      id="tokens-heading"
      title="Personal access tokens"
      notice={notice}
      description={
        <>
          A token acts as you, with your role ({me.role})
          {canAct ? ": it can read and take the same actions you can in the console" : ": it can read, like you"}. Use
          it as <span className="font-mono">Authorization: Bearer stl_pat_…</span> from scripts. It stops working when
          it expires, when you revoke it, or when an admin deactivates you. Settle keeps only a hash: a token is shown
          once, when you create it. Tokens are created only here, signed in: a token cannot create another.
        </>
      }
    >
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
        <SubmitButton step={create} pendingLabel="Creating…" className="mb-5">
          Create token
        </SubmitButton>
      </form>
      <ErrorAlert error={create.error} />
      <DataTable
        caption="Your personal access tokens"
        columns={columns}
        rows={data.items}
        row={tokenRow}
        error={error}
        empty={
          <EmptyState>
            You have no tokens. Create one to script what you do in the console, for example to list the queue from a
            cron job.
          </EmptyState>
        }
      />

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
    </PageSection>
  );
}
