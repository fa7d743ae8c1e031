"use client";

import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import type { InvocationView } from "@/lib/invocations/read";
import { formatUtc } from "@/components/audit/time";
import { api } from "@/components/api";
import { useCan } from "@/components/current-user";
import { Button } from "@/components/ui/button";
import { FormDialog } from "@/components/ui/dialog";
import { TextArea } from "@/components/ui/field";
import { invocationHref } from "@/lib/invocations/links";
import { useShowUpdated } from "./show-updated";

// Duplicates the key could not catch (decision 028), on the invocation page:
// an invocation flagged after the fact as a possible duplicate effect of an
// earlier one (confirm, with what was done, or dismiss), and on the earlier
// one, the writes the guard refused as its duplicates ("not a duplicate" lets
// that key through). Every answer is in the audit trail.

type Ask = { kind: "confirmed" | "dismissed" } | { kind: "not_duplicate"; key: string };

const WORDS: Record<Ask["kind"], { title: string; description: string; submit: string }> = {
  confirmed: {
    title: "Confirm: a duplicate effect",
    description:
      "Say what was done about the second effect (a refund, an apology). It leaves the queue; the note is in the audit trail.",
    submit: "Confirm duplicate",
  },
  dismissed: {
    title: "Dismiss: not a duplicate",
    description:
      "This call was meant to happen again. It leaves the queue, and its key is cleared against the earlier invocation, so the guard lets its retries through.",
    submit: "Dismiss",
  },
  not_duplicate: {
    title: "Not a duplicate",
    description:
      "The write under this key is a call of its own, though its arguments match this invocation's. The guard allows it from now on.",
    submit: "Not a duplicate",
  },
};

function AnswerDialog({ inv, ask, onClose }: { inv: InvocationView; ask: Ask; onClose: () => void }) {
  const [note, setNote] = useState("");
  const send = useMutation({
    mutationFn: () =>
      ask.kind === "not_duplicate"
        ? api.post("/api/v1/invocations/{invocation_id}/not-duplicate", {
            params: { invocation_id: inv.invocation_id },
            body: { idempotency_key: ask.key, note: note.trim() || null, runtime: inv.runtime },
          })
        : api.post("/api/v1/invocations/{invocation_id}/duplicate-review", {
            params: { invocation_id: inv.invocation_id },
            body:
              ask.kind === "confirmed"
                ? { verdict: "confirmed", note: note.trim(), runtime: inv.runtime }
                : { verdict: "dismissed", note: note.trim() || null, runtime: inv.runtime },
          }),
    onSuccess: useShowUpdated(inv, onClose),
  });
  const words = WORDS[ask.kind];
  const noteRequired = ask.kind === "confirmed";
  return (
    <FormDialog
      title={words.title}
      description={words.description}
      submitLabel={words.submit}
      pendingLabel="Saving…"
      step={{ isPending: send.isPending || (noteRequired && note.trim() === ""), error: send.error }}
      onSubmit={() => send.mutate()}
      onClose={onClose}
    >
      <TextArea
        label={noteRequired ? "What was done" : "Why (optional)"}
        value={note}
        onChange={(event) => setNote(event.target.value)}
        required={noteRequired}
        maxLength={4000}
        rows={3}
      />
    </FormDialog>
  );
}

/** Who answered a review, from the audit trail. */
function answeredBy(inv: InvocationView): { actor: string; at: string; note: string | null } | null {
  const entry = [...inv.actions]
    .reverse()
    .find((a) => a.action === "confirm_duplicate" || a.action === "dismiss_duplicate");
  return entry ? { actor: entry.actor, at: entry.at, note: entry.note } : null;
}

export function PossibleDuplicate({ inv }: { inv: InvocationView }) {
  const mayAct = useCan("act");
  const [ask, setAsk] = useState<Ask | null>(null);
  const refusals = inv.duplicate_refusals;
  if (inv.possible_duplicate_of === null && refusals.length === 0) return null;
  const earlier = inv.possible_duplicate_of;
  const answer = answeredBy(inv);

  return (
    <section
      aria-labelledby="duplicate-heading"
      className={`space-y-3 rounded-lg border p-4 ${inv.duplicate_review === "open" || refusals.some((r) => r.cleared_by === null) ? "border-amber-300 bg-amber-50" : "border-slate-200 bg-white"}`}
      data-testid="possible-duplicate-panel"
    >
      {earlier !== null ? (
        <div className="space-y-2">
          <h2 id="duplicate-heading" className="text-sm font-semibold text-amber-900">
            {inv.duplicate_review === "open" ? "⚠ Possible duplicate effect" : "Possible duplicate effect"}
          </h2>
          <p className="text-sm text-slate-800">
            The same <span className="font-mono">{inv.tool}</span> call, with the same arguments, as{" "}
            <Link
              href={invocationHref(earlier, inv.runtime)}
              className="break-all font-mono text-indigo-700 hover:underline"
            >
              {earlier}
            </Link>
            , under another idempotency key (the runtime may have minted a new key for a retry).
          </p>
          {inv.duplicate_review === "open" ? (
            mayAct ? (
              <div className="flex flex-wrap gap-2">
                <Button variant="primary" onClick={() => setAsk({ kind: "confirmed" })}>
                  Confirm duplicate…
                </Button>
                <Button onClick={() => setAsk({ kind: "dismissed" })}>Not a duplicate…</Button>
              </div>
            ) : (
              <p className="text-sm text-slate-600">Waiting for an operator to confirm or dismiss it.</p>
            )
          ) : inv.duplicate_review === null ? (
            <p className="text-sm text-slate-600">
              Noted only: a second call of this class is not chased in the queue.
            </p>
          ) : (
            <p className="text-sm text-slate-700" data-testid="duplicate-review">
              {inv.duplicate_review === "confirmed" ? "Confirmed as a duplicate" : "Dismissed: not a duplicate"}
              {answer ? (
                <>
                  {" "}
                  by {answer.actor}, {formatUtc(answer.at, { seconds: false })}
                </>
              ) : null}
              {answer?.note ? <>: “{answer.note}”</> : "."}
            </p>
          )}
        </div>
      ) : null}
      {refusals.length > 0 ? (
        <div className="space-y-2">
          <h2 id={earlier === null ? "duplicate-heading" : undefined} className="text-sm font-semibold text-amber-900">
            Writes refused as duplicates of this one
          </h2>
          <ul className="space-y-1 text-sm">
            {refusals.map((r) => (
              <li key={r.idempotency_key} className="flex flex-wrap items-center gap-2" data-testid="duplicate-refusal">
                <span className="break-all font-mono text-xs">{r.idempotency_key}</span>
                <span className="text-slate-600">
                  task {r.task_id}, refused {r.refused}× (last {formatUtc(r.last_at, { seconds: false })})
                </span>
                {r.cleared_by ? (
                  <span className="text-emerald-800">not a duplicate, by {r.cleared_by}</span>
                ) : mayAct ? (
                  <Button size="sm" onClick={() => setAsk({ kind: "not_duplicate", key: r.idempotency_key })}>
                    Not a duplicate…
                  </Button>
                ) : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {ask ? <AnswerDialog inv={inv} ask={ask} onClose={() => setAsk(null)} /> : null}
    </section>
  );
}
