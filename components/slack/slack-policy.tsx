"use client";

import { useState } from "react";
import type { SlackSettingsInput } from "@/lib/slack/settings";
import {
  defaultSlackActionPolicy,
  slackActions,
  slackPolicyClasses,
  type SlackAction,
  type SlackActionPolicy,
  type SlackPolicyClass,
} from "@/lib/slack/policy";
import { queryKeys } from "@/lib/query/keys";
import { useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { Button, SubmitButton } from "../ui/button";
import { DataTable, type Column } from "../ui/data-table";
import { ErrorAlert } from "../ui/error-alert";
import { Subsection } from "../ui/page";

// What a linked person may do from a Slack message, per effect class: a grid of checkboxes, saved together.
// The server's defaults keep approving money and destructive calls in the console until an admin ticks them.

const actionWords: Record<SlackAction, string> = {
  approve: "Approve",
  reject: "Reject",
  record: "Found / not found",
  escalate: "Escalate",
};

const classHelp: Record<SlackPolicyClass, string> = {
  money: "moves money",
  destructive: "deletes or overwrites",
  send: "sends a message",
  create: "creates a record",
  read: "reads only",
  unclassified: "no effect class known",
};

const same = (a: SlackActionPolicy, b: SlackActionPolicy) =>
  slackPolicyClasses.every((c) => a[c].length === b[c].length && a[c].every((x) => b[c].includes(x)));

export function SlackPolicy({ policy, onSaved }: { policy: SlackActionPolicy; onSaved: (message: string) => void }) {
  const [draft, setDraft] = useState<SlackActionPolicy>(policy);
  const [base, setBase] = useState(policy);
  // The server's policy moved (saved here or elsewhere): start again from it.
  if (!same(base, policy)) {
    setBase(policy);
    setDraft(policy);
  }
  const save = useCollectionMutation(queryKeys.admin.slackSettings, {
    mutationFn: (body: SlackSettingsInput) => api.put("/api/v1/admin/integrations/slack", { body }),
    onSuccess: () => onSaved("Saved what Slack may do. Messages already posted show their buttons as they were drawn."),
  });
  const dirty = !same(draft, policy);
  const toggle = (c: SlackPolicyClass, a: SlackAction) =>
    setDraft((d) => ({ ...d, [c]: d[c].includes(a) ? d[c].filter((x) => x !== a) : [...d[c], a] }));
  const columns: Array<Column<SlackPolicyClass>> = [
    {
      header: "Effect class",
      rowHeader: true,
      cell: (c) => (
        <>
          {c}
          <span className="block text-xs font-normal text-slate-500">{classHelp[c]}</span>
        </>
      ),
    },
    ...slackActions.map((a): Column<SlackPolicyClass> => ({
      header: actionWords[a],
      cell: (c) => {
        const changed = draft[c].includes(a) !== policy[c].includes(a);
        const offByDefault = !defaultSlackActionPolicy[c].includes(a);
        return (
          <label className="inline-flex items-center gap-2">
            <input
              type="checkbox"
              checked={draft[c].includes(a)}
              onChange={() => toggle(c, a)}
              aria-label={`${actionWords[a]} from Slack for ${c} calls`}
              className="h-4 w-4 rounded border-slate-300"
            />
            {changed ? <span className="text-xs text-indigo-700">changed</span> : null}
            {!changed && offByDefault && draft[c].includes(a) ? (
              <span className="text-xs text-amber-800">not the default</span>
            ) : null}
          </label>
        );
      },
    })),
  ];
  return (
    <Subsection id="slack-policy-heading" title="What may be done from Slack">
      <p className="max-w-3xl text-sm text-slate-600">
        Per effect class, which buttons a Slack message offers and which clicks Settle takes. A click still needs a
        linked person whose role may act, and the same version check, quorum and approval expiry as the console. By
        default, approving or rejecting <strong>money</strong> and <strong>destructive</strong> calls stays in the
        console.
      </p>
      <form
        data-testid="slack-policy"
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate({ actions: draft });
        }}
        className="max-w-3xl space-y-3"
      >
        <DataTable
          caption="Actions allowed from Slack, per effect class"
          columns={columns}
          rows={slackPolicyClasses}
          row={{ key: (c) => c, testId: "slack-policy-row", data: (c) => ({ "data-class": c }) }}
        />
        <div className="flex items-center gap-2">
          <SubmitButton step={save} pendingLabel="Saving…" disabled={!dirty || save.isPending}>
            Save what Slack may do
          </SubmitButton>
          {dirty ? (
            <Button onClick={() => setDraft(policy)} disabled={save.isPending}>
              Undo changes
            </Button>
          ) : null}
        </div>
        <ErrorAlert error={save.error} />
      </form>
    </Subsection>
  );
}
