import type { InvocationView } from "@/lib/invocations/read";
import type { InvocationStatus } from "@/lib/outcome/status";
import { formatAgo, formatClock, formatDateTime } from "@/components/timeline/format";

// What the state means, what the runtime is being told (docs/outcome-model.md §5's decision),
// and how it was settled. Words first: an operator should not need the spec.

type Decision = { word: string; means: string };

export function runtimeDecision(inv: Pick<InvocationView, "status" | "resolution" | "not_before">): Decision {
  const wait = { word: "wait", means: "the runtime must not act on this call until a person or evidence decides" };
  const table: Record<InvocationStatus, Decision> = {
    pending: wait,
    stalled: wait,
    outcome_unknown: wait,
    partially_applied: wait,
    escalated: wait,
    awaiting_approval: wait,
    verifying: {
      word: "verify",
      means: "the runtime should probe whether the effect happened and send a probe record",
    },
    succeeded: { word: "do_not_retry", means: "the effect exists; a retry would repeat it" },
    retry_scheduled: {
      word: "wait",
      means: `then retry_allowed${inv.not_before ? ` after ${formatClock(inv.not_before)} UTC` : ""}, with the same idempotency key`,
    },
    needs_input: { word: "correct_input", means: "the request has to change before it is sent again" },
    approved: { word: "proceed", means: "approved: the runtime may go ahead" },
    rejected: { word: "abandon", means: "rejected: the runtime must not make this call" },
    failed: { word: "abandon", means: "it failed permanently and nothing was applied" },
    reconciled:
      inv.resolution?.commit_state === "not_committed"
        ? { word: "retry_allowed", means: "settled as not committed: a retry with the same idempotency key is safe" }
        : { word: "do_not_retry", means: "settled as committed: the effect exists; a retry would repeat it" },
  };
  return table[inv.status];
}

function meaning(inv: InvocationView, now: string): string | null {
  const what = inv.effect_class === "read" ? "this read" : "this write";
  switch (inv.status) {
    case "outcome_unknown":
      return `Nobody knows whether ${what} took effect. It is never retried blindly: verify it (ask the runtime to probe, or check the system of record and record what you found), settle it with evidence, or escalate it.`;
    case "stalled":
      return `The intent was written but no outcome came within the stall window${inv.stall_at ? ` (stalled since ${formatClock(inv.stall_at)} UTC, ${formatAgo(inv.stall_at, now)})` : ""}. The call may have been dispatched: treat it as unknown and verify before anything else.`;
    case "verifying":
      return `The runtime was asked to verify ${formatAgo(inv.status_since, now)} and Settle is waiting for its probe record. If you check the system of record yourself, record what you found.`;
    case "partially_applied":
      return "Some items were applied and some were not, or are unknown: the per-item results are in the attempts below.";
    case "awaiting_approval":
      return "The runtime is waiting for a person to approve or reject this call before it goes on.";
    case "escalated":
      return "Handed to a manager: the outcome is still not settled.";
    case "pending":
      return inv.stall_at
        ? `In flight: the intent is written and the outcome is due; it becomes stalled at ${formatClock(inv.stall_at)} UTC if none comes.`
        : "In flight: waiting for the outcome.";
    case "succeeded":
      return "Done: the tool reported the effect as committed.";
    case "failed":
      return "Failed for good: the tool reported that nothing was applied and that trying again will not help.";
    case "needs_input":
      return "Not applied: the request itself has to change before it is sent again.";
    case "retry_scheduled":
      return `Not applied; the runtime may try again${inv.not_before ? ` after ${formatClock(inv.not_before)} UTC` : ""}.`;
    case "approved":
    case "rejected":
      return `A person ${inv.status} it.`;
    case "reconciled":
      return null;
  }
}

export function NextStep({ inv, now }: { inv: InvocationView; now: string }) {
  const decision = runtimeDecision(inv);
  const text = meaning(inv, now);
  const r = inv.resolution;
  return (
    <section aria-labelledby="next-step-heading" className="space-y-2 rounded-lg border border-slate-200 bg-white p-4">
      <h2 id="next-step-heading" className="text-sm font-semibold">
        Where it stands
      </h2>
      {inv.conflict ? (
        <p role="note" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-900">
          <span aria-hidden="true">⚠ </span>Evidence arrived that disagrees with an earlier settlement, so Settle
          re-opened this invocation. The conflict is marked on the timeline; settle it again with evidence.
        </p>
      ) : null}
      {text ? (
        <p className="text-sm text-slate-800" data-testid="state-meaning">
          {text}
        </p>
      ) : null}
      {r ? (
        <p
          className={`text-sm ${inv.status === "reconciled" ? "text-slate-800" : "text-slate-600"}`}
          data-testid="resolution"
        >
          <span className={inv.status === "reconciled" ? "font-medium" : ""}>
            {inv.status === "reconciled" ? "Settled" : "Earlier it was settled"} as{" "}
            {r.commit_state === "committed" ? "committed" : "not committed"}
          </span>{" "}
          {r.by === "probe" ? (
            "by the runtime’s probe"
          ) : (
            <>
              by <span className="font-medium">{r.actor ?? "an operator"}</span>
            </>
          )}{" "}
          at <time dateTime={r.at}>{formatDateTime(r.at)}</time>
          {inv.status === "reconciled" ? "" : "; what the runtime reported after that decided the status above"}
          {r.note ? (
            <span className="mt-1 block whitespace-pre-wrap break-words rounded bg-slate-50 px-2 py-1">{r.note}</span>
          ) : (
            "."
          )}
        </p>
      ) : null}
      <p className="text-sm text-slate-700">
        The runtime is told:{" "}
        <code className="rounded bg-slate-100 px-1 font-mono text-xs font-semibold">{decision.word}</code> —{" "}
        {decision.means}.
      </p>
    </section>
  );
}
