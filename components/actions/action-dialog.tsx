"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { OperatorAction } from "@/lib/outcome/actions";
import { ApiClientError } from "@/lib/query/fetch";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { FormDialog } from "../ui/dialog";
import { TextArea, TextField } from "../ui/field";
import { useCurrentUser } from "../current-user";
import { actionMeta, type ConsoleAction } from "./action-meta";
import { stringifyExactJson } from "@/lib/json/exact";
import { ApproveEditsDialog } from "./approve-edits-dialog";

export type ActionTarget = {
  invocation_id: string;
  runtime: string;
  version: number;
  status: string;
  tool: string;
  /** What the call was (its one-line summary), shown with every decision. */
  summary?: string | null;
  /** The arguments a person approves, when the page has them (the queue's rows do not). */
  arguments?: unknown;
  /** Who edited the arguments pending approval; absent: they are the call's own. */
  editedBy?: string | null;
  /** When an approval fails closed (the policy's expiry), when the page knows. */
  expiresAt?: string | null;
  /** Approvals the policy needs, when the page knows. */
  quorum?: number;
};

/** What is being decided on: the call's summary, and for an approval the arguments approved. */
function WhatIsDecided({ target, action }: { target: ActionTarget; action: ConsoleAction }) {
  if (!target.summary && action !== "approve") return null;
  return (
    <div className="space-y-2 rounded-md bg-slate-50 p-3 text-sm" data-testid="decided-call">
      {target.summary ? <p className="break-words font-medium text-slate-900">{target.summary}</p> : null}
      {action === "approve" ? (
        target.arguments != null ? (
          <div>
            <p className="text-xs text-slate-600">
              {target.editedBy
                ? `You approve ${target.editedBy}'s edited arguments (secrets redacted); the call is to run with them, and an outcome that reports others is flagged.`
                : "You approve these arguments (secrets redacted); an outcome that reports others is flagged."}
            </p>
            <pre className="mt-1 max-h-48 overflow-auto whitespace-pre-wrap break-all rounded bg-white p-2 font-mono text-xs ring-1 ring-inset ring-slate-200">
              {stringifyExactJson(target.arguments, 2)}
            </pre>
          </div>
        ) : (
          <p className="text-xs text-slate-600">Open the invocation to see the arguments in full before approving.</p>
        )
      ) : null}
    </div>
  );
}

/**
 * The request body for one action; shared with bulk actions. The form's required fields stand in for the
 * schema: the server parses the body again, and its message says what is missing.
 */
export function actionBody(action: ConsoleAction, form: FormData, me: string): OperatorAction {
  return fromForm(action, form, me) as OperatorAction;
}

function fromForm(action: ConsoleAction, form: FormData, me: string): Record<string, unknown> {
  const text = (name: string) => {
    const v = String(form.get(name) ?? "").trim();
    return v === "" ? undefined : v;
  };
  switch (action) {
    case "claim":
      return { action: "assign", assignee: me };
    case "assign":
      return { action: "assign", assignee: text("assignee"), note: text("note") };
    case "record_verification":
      return { action, result: text("result"), evidence: text("evidence") };
    case "mark_reconciled":
      return { action, commit_state: text("commit_state"), note: text("note") };
    case "reject":
    case "escalate":
      return { action, note: text("note"), reply: text("reply") };
    default:
      return { action, note: text("note") };
  }
}

/**
 * The consequential answers start unselected (a pre-selected "Committed" settled an unsent message with
 * one Enter). The dialog's confirm button names the choice and stays disabled until one is made.
 */
const choices = {
  record_verification: {
    name: "result",
    legend: "What did you find?",
    options: [
      {
        value: "found",
        label: "Found",
        hint: "the effect happened: settle as committed",
        confirm: "Record: found (committed)",
      },
      {
        value: "absent",
        label: "Absent",
        hint: "it did not happen: a retry with the same key is allowed",
        confirm: "Record: NOT found",
      },
      {
        value: "inconclusive",
        label: "Inconclusive",
        hint: "nothing changes; it stays in the queue",
        confirm: "Record: inconclusive",
      },
    ],
    unchosen: "Choose what you found",
  },
  mark_reconciled: {
    name: "commit_state",
    legend: "Settle as",
    options: [
      {
        value: "committed",
        label: "Committed",
        hint: "the side effect exists; the runtime must not retry",
        confirm: "Settle as committed",
      },
      {
        value: "not_committed",
        label: "Not committed",
        hint: "it does not exist; a retry with the same key is allowed",
        confirm: "Settle as NOT committed",
      },
    ],
    unchosen: "Choose committed or not committed",
  },
} as const;
type ChoiceAction = keyof typeof choices;
const hasChoice = (action: ConsoleAction): action is ChoiceAction => action in choices;

/** What the confirm button says: the choice made, or what is still missing (and it is disabled). */
export function confirmLabel(action: ConsoleAction, choice: string | null): { label: string; ready: boolean } {
  if (!hasChoice(action)) return { label: actionMeta[action].label, ready: true };
  const chosen = choices[action].options.find((o) => o.value === choice);
  return chosen ? { label: chosen.confirm, ready: true } : { label: choices[action].unchosen, ready: false };
}

function Choice({
  name,
  options,
  legend,
  value,
  onChange,
}: {
  name: string;
  legend: string;
  options: ReadonlyArray<{ value: string; label: string; hint: string }>;
  value: string | null;
  onChange: (value: string) => void;
}) {
  return (
    <fieldset className="space-y-1">
      <legend className="text-sm font-medium text-slate-800">{legend}</legend>
      {options.map((o) => (
        <label key={o.value} className="flex items-start gap-2 rounded-md border border-slate-200 p-2 text-sm">
          <input
            type="radio"
            name={name}
            value={o.value}
            checked={value === o.value}
            onChange={() => onChange(o.value)}
            className="mt-1"
            required
          />
          <span>
            <span className="font-medium">{o.label}</span> <span className="text-slate-600">— {o.hint}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}

/** Words for the agent with a rejection or an escalation: the decision API's `reply`. */
function ReplyField() {
  return (
    <TextArea
      label="Message to the agent (optional)"
      name="reply"
      maxLength={4000}
      placeholder="e.g. Refund at most 50 EUR; ask the customer first."
      hint="The agent receives this as the tool's result, in place of a bare refusal: say what it should do instead. Leave it empty to send none."
    />
  );
}

/** The fields an action asks for; the server validates them again. */
export function ActionFields({
  action,
  choice = null,
  onChoice = () => {},
}: {
  action: ConsoleAction;
  choice?: string | null;
  onChoice?: (value: string) => void;
}) {
  switch (action) {
    case "claim":
      return <p className="text-sm text-slate-700">It will be assigned to you.</p>;
    case "assign":
      return <TextField label="Assignee (email)" name="assignee" type="email" required />;
    case "record_verification":
      return (
        <div className="space-y-3">
          <Choice {...choices.record_verification} value={choice} onChange={onChoice} />
          <TextArea
            label="Evidence"
            name="evidence"
            placeholder="Where you looked and what you saw, e.g. Stripe charge ch_123"
            required
          />
        </div>
      );
    case "mark_reconciled":
      return (
        <div className="space-y-3">
          <Choice {...choices.mark_reconciled} value={choice} onChange={onChoice} />
          <TextArea label="Evidence note (required)" name="note" required />
        </div>
      );
    case "escalate":
      return (
        <div className="space-y-3">
          <TextArea label="Reason (required)" name="note" hint="For the people who take it over." required />
          <ReplyField />
        </div>
      );
    case "reject":
      return (
        <div className="space-y-3">
          <TextArea label="Note (optional)" name="note" hint="For the audit trail." />
          <ReplyField />
        </div>
      );
    case "comment":
      return <TextArea label="Comment" name="note" required />;
    default:
      return <TextArea label="Note (optional)" name="note" />;
  }
}

type DialogProps = { target: ActionTarget; action: ConsoleAction | null; onClose: () => void };

/** One dialog per opening: a choice made for one action never carries over to the next. */
export function ActionDialog(props: DialogProps) {
  if (props.action === "approve_with_edits")
    return <ApproveEditsDialog target={props.target} onClose={props.onClose} />;
  return props.action ? <OpenActionDialog key={props.action} {...props} action={props.action} /> : null;
}

function OpenActionDialog({ target, action, onClose }: DialogProps & { action: ConsoleAction }) {
  const me = useCurrentUser();
  const queryClient = useQueryClient();
  const [conflict, setConflict] = useState<string | null>(null);
  const [choice, setChoice] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: (body: OperatorAction) =>
      api.post("/api/v1/invocations/{invocation_id}/actions", {
        params: { invocation_id: target.invocation_id },
        body: { ...body, version: target.version, runtime: target.runtime },
      }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.invocations.all }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.tasks.all });
      void queryClient.invalidateQueries({ queryKey: queryKeys.audit.all });
      onClose();
    },
    onError: (error) => {
      if (error instanceof ApiClientError && error.code === "VERSION_CONFLICT") {
        const now = error.envelope?.safe_details as { status?: string; version?: number } | undefined;
        setConflict(
          `Someone else changed this invocation while you were looking: it is now ${now?.status ?? "different"} (version ${now?.version ?? "?"}). Nothing was changed. Review the new state, then decide again.`,
        );
      }
    },
  });

  const meta = actionMeta[action];
  const confirm = confirmLabel(action, choice);
  const submit = (form: FormData) => {
    // Enter does nothing until the consequential answer is chosen.
    if (!confirm.ready) return;
    setConflict(null);
    mutation.mutate(actionBody(action, form, me.email));
  };
  const error =
    mutation.error instanceof ApiClientError && mutation.error.code !== "VERSION_CONFLICT"
      ? mutation.error.message
      : null;

  return (
    <FormDialog
      title={`${meta.label}: ${target.tool}`}
      description={meta.help}
      submitLabel={conflict ? null : confirm.label}
      pendingLabel="Saving…"
      step={{ isPending: mutation.isPending, error }}
      submitDisabled={!confirm.ready}
      cancelLabel={conflict ? "Close and review" : "Cancel"}
      onSubmit={submit}
      onClose={onClose}
    >
      <WhatIsDecided target={target} action={action} />
      <ActionFields action={action} choice={choice} onChoice={setChoice} />
      {conflict ? (
        <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
          {conflict}
        </p>
      ) : null}
    </FormDialog>
  );
}
