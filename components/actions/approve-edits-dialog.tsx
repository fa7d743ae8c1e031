"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { diffArguments } from "@/lib/invocations/arguments-diff";
import { stringifyExactJson } from "@/lib/json/exact";
import { ApiClientError } from "@/lib/query/fetch";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { ChangesDiff } from "../ui/changes-diff";
import { Button } from "../ui/button";
import { FormDialog } from "../ui/dialog";
import { TextArea } from "../ui/field";
import type { ActionTarget } from "./action-dialog";
import { ArgumentFields } from "./argument-fields";
import { approvalArguments, approvalRefusal, readEditedArguments, type Arguments } from "./edited-arguments";

// Approve with edits: the person changes the arguments the approval is for (the amount, say: a field per
// top-level member, or the JSON), sees what they changed against them as they type, and approves; the call is to
// run with theirs (docs/outcome-model.md §4).
// Settle shows arguments redacted and refuses an edit that holds a redacted or secret-looking value. An integer
// past 2^53 is read, shown, diffed and sent with every digit (a BigInt, lib/json; the typed client writes it so).

type Props = { target: ActionTarget; onClose: () => void };

/** The arguments the approval is for: the page's, else (a queue row has none) the invocation read now. */
function useApprovalTarget(target: ActionTarget) {
  const known = target.arguments !== undefined;
  const read = useQuery({
    queryKey: queryKeys.invocations.detail(target.invocation_id, target.runtime),
    queryFn: ({ signal }) =>
      api.get("/api/v1/invocations/{invocation_id}", {
        params: { invocation_id: target.invocation_id },
        query: { runtime: target.runtime },
        signal,
      }),
    enabled: !known,
    staleTime: Infinity,
  });
  if (known) {
    const args = target.arguments;
    const base = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Arguments) : {};
    return { ready: true as const, base, editedBy: target.editedBy ?? null, version: target.version, error: null };
  }
  if (!read.data) return { ready: false as const, error: read.error };
  const found = approvalArguments(read.data);
  return {
    ready: true as const,
    base: found.arguments ?? {},
    editedBy: found.editedBy,
    version: read.data.version,
    error: null,
  };
}

export function ApproveEditsDialog({ target, onClose }: Props) {
  const loaded = useApprovalTarget(target);
  if (!loaded.ready) {
    return (
      <FormDialog
        title={`Approve with edits: ${target.tool}`}
        submitLabel={null}
        step={{
          isPending: false,
          error: loaded.error ? `Could not read the call's arguments: ${loaded.error.message}` : null,
        }}
        onSubmit={() => {}}
        onClose={onClose}
      >
        {loaded.error ? null : <p className="text-sm text-slate-600">Reading the call&apos;s arguments…</p>}
      </FormDialog>
    );
  }
  return (
    <EditForm
      target={target}
      base={loaded.base}
      editedBy={loaded.editedBy}
      version={loaded.version}
      onClose={onClose}
    />
  );
}

function EditForm({
  target,
  base,
  editedBy,
  version,
  onClose,
}: Props & { base: Arguments; editedBy: string | null; version: number }) {
  const queryClient = useQueryClient();
  const original = useMemo(() => stringifyExactJson(base, 2), [base]);
  const [text, setText] = useState(original);
  const [note, setNote] = useState("");
  const [refusal, setRefusal] = useState<{ text: string; final: boolean } | null>(null);
  const errorId = useId();

  const edit = (next: string) => {
    setText(next);
    // A refusal of the arguments sent no longer speaks for the ones being edited.
    if (refusal && !refusal.final) setRefusal(null);
  };
  const read = useMemo(() => readEditedArguments(text), [text]);
  const changes = useMemo(() => (read.ok ? diffArguments(base, read.value) : []), [base, read]);

  const approve = useMutation({
    mutationFn: (edited: Arguments) =>
      api.post("/api/v1/invocations/{invocation_id}/actions", {
        params: { invocation_id: target.invocation_id },
        body: {
          action: "approve",
          arguments: edited,
          note: note.trim() || undefined,
          version,
          runtime: target.runtime,
        },
      }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.invocations.all }),
    onSuccess: (updated) => {
      queryClient.setQueryData(queryKeys.invocations.detail(target.invocation_id, target.runtime), updated);
      void queryClient.invalidateQueries({ queryKey: queryKeys.tasks.all });
      void queryClient.invalidateQueries({ queryKey: queryKeys.audit.all });
      onClose();
    },
    onError: (error) =>
      setRefusal(error instanceof ApiClientError ? approvalRefusal(error) : { text: error.message, final: false }),
  });

  const ready = read.ok && changes.length > 0;
  const submit = () => {
    if (!read.ok || !ready) return;
    setRefusal(null);
    approve.mutate(read.value);
  };

  return (
    <FormDialog
      title={`Approve with edits: ${target.tool}`}
      description="Change what the call is to do, then approve: the runtime runs it with your arguments, and a run with any others is flagged. The audit trail keeps what you changed."
      width="wide"
      submitLabel={refusal?.final ? null : "Approve with these edits"}
      pendingLabel="Approving…"
      step={{ isPending: approve.isPending, error: refusal?.final ? null : (refusal?.text ?? null) }}
      submitDisabled={!ready}
      cancelLabel={refusal?.final ? "Close and review" : "Cancel"}
      onSubmit={submit}
      onClose={onClose}
      aside={
        text !== original ? (
          <Button size="sm" variant="ghost" onClick={() => edit(original)}>
            Undo my changes
          </Button>
        ) : undefined
      }
    >
      {target.summary ? <p className="break-words text-sm font-medium text-slate-900">{target.summary}</p> : null}
      <div className="grid gap-4 md:grid-cols-2">
        <div className="space-y-3">
          {read.ok ? (
            <ArgumentFields value={read.value} onChange={(next) => edit(stringifyExactJson(next, 2))} />
          ) : null}
          <TextArea
            label="Arguments (JSON)"
            hint={
              editedBy
                ? `These are ${editedBy}'s edit, awaiting approval; secrets show as [redacted] and cannot be edited.`
                : "The call's arguments as Settle stored them; secrets show as [redacted] and cannot be edited."
            }
            code
            rows={Math.min(Math.max(original.split("\n").length + 1, 6), 14)}
            value={text}
            onChange={(event) => edit(event.target.value)}
            aria-invalid={!read.ok}
            aria-describedby={read.ok ? undefined : errorId}
            data-testid="arguments-editor"
          />
          {read.ok ? null : (
            <p id={errorId} role="alert" className="text-xs text-rose-700" data-testid="arguments-error">
              {read.error}
            </p>
          )}
        </div>
        <div className="space-y-1">
          <p className="text-sm font-medium text-slate-800">What you changed</p>
          {changes.length > 0 ? (
            <ChangesDiff changes={changes} caption="Your changes to the arguments" testId="edit-diff" />
          ) : (
            <p className="rounded-md bg-slate-50 p-3 text-sm text-slate-600" data-testid="edit-diff-empty">
              {read.ok
                ? "Nothing yet: change a value on the left. To approve the arguments as they are, use Approve."
                : "Fix the JSON to see your changes."}
            </p>
          )}
          {target.expiresAt ? (
            <p className="pt-2 text-xs text-amber-900">
              This approval expires at {formatUtc(target.expiresAt, { seconds: false })}; after that the call is
              rejected and nothing is approved.
            </p>
          ) : null}
          {target.quorum && target.quorum > 1 ? (
            <p className="pt-2 text-xs text-slate-600">
              It needs {target.quorum} approvals of the same arguments: yours counts for the edited ones, and others
              approve those.
            </p>
          ) : null}
        </div>
      </div>
      <TextArea
        label="Note (optional)"
        hint="Why you changed it, for the audit trail."
        value={note}
        onChange={(event) => setNote(event.target.value)}
        maxLength={4000}
        rows={2}
      />
      {refusal?.final ? (
        <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
          {refusal.text}
        </p>
      ) : null}
    </FormDialog>
  );
}
