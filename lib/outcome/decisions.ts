import type { Resolution } from "./lifecycle";
import type { InvocationStatus } from "./status";

// What a runtime may do next with an invocation (docs/outcome-model.md §5). Pure: the decision
// endpoint, the guard and webhook events all read it from here.

export const decisions = [
  "wait",
  "verify",
  "retry_allowed",
  "do_not_retry",
  "proceed",
  "abandon",
  "correct_input",
] as const;
export type Decision = (typeof decisions)[number];

export type DecisionInput = {
  status: InvocationStatus;
  commitState: string;
  notBefore: Date | string | null;
  resolution: Resolution | null;
};

export type DecisionReading = { decision: Decision; reason: string };

const reasons: Partial<Record<InvocationStatus, DecisionReading>> = {
  pending: { decision: "wait", reason: "The intent is recorded and no outcome has arrived yet." },
  stalled: {
    decision: "wait",
    reason: "No outcome arrived within the stall window; a person is checking whether the effect happened.",
  },
  outcome_unknown: {
    decision: "wait",
    reason: "Nobody knows yet whether the effect happened; a person is deciding. Do not retry.",
  },
  partially_applied: {
    decision: "wait",
    reason: "Some items may have been applied; a person is deciding. Do not retry.",
  },
  escalated: { decision: "wait", reason: "Handed to a manager; wait for their decision." },
  awaiting_approval: { decision: "wait", reason: "Waiting for approval." },
  verifying: {
    decision: "verify",
    reason: "An operator asked for a probe: look up whether the effect exists and send a probe record.",
  },
  succeeded: { decision: "do_not_retry", reason: "The effect is committed." },
  needs_input: { decision: "correct_input", reason: "Not committed: the request must change before it is sent again." },
  approved: { decision: "proceed", reason: "Approved: go ahead." },
  rejected: { decision: "abandon", reason: "The approval was refused or expired." },
  failed: { decision: "abandon", reason: "Not committed, and the failure is permanent." },
};

export function decideFor(input: DecisionInput, now: Date): DecisionReading {
  if (input.status === "reconciled") {
    return input.commitState === "committed" || input.resolution?.commit_state === "committed"
      ? {
          decision: "do_not_retry",
          reason: `Settled as committed by ${input.resolution?.by ?? "evidence"}: the effect exists.`,
        }
      : {
          decision: "retry_allowed",
          reason: `Settled as not committed by ${input.resolution?.by ?? "evidence"}: retry with the same idempotency key.`,
        };
  }
  if (input.status === "retry_scheduled") {
    const at = input.notBefore === null ? null : new Date(input.notBefore);
    return at !== null && at.getTime() > now.getTime()
      ? { decision: "wait", reason: `Not committed; retry after ${at.toISOString()}.` }
      : {
          decision: "retry_allowed",
          reason: "Not committed and the retry delay has passed: retry with the same idempotency key.",
        };
  }
  return reasons[input.status] ?? { decision: "wait", reason: "Waiting." };
}
