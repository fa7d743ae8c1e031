import type { CommitState, NextAction, Outcome } from "../../outcome/vocabulary";
import {
  commitFromItems,
  compact,
  delayHint,
  lookup,
  pick,
  readItems,
  seconds,
  success,
  text,
  withHints,
  type DialectAdapter,
  type Hints,
} from "./shared";

// source article 002 (docs/outcome-model.md)'s outcome: four outcomes, an explicit effect flag, per-item results.

const effectToCommit: Record<string, CommitState> = {
  yes: "committed",
  no: "not_committed",
  partial: "partial",
  unknown: "unknown",
};

function commitState(
  outcome: Outcome,
  stated: CommitState | null,
  fromItems: CommitState | null,
  isWrite: boolean,
): CommitState {
  if (fromItems === "partial" || stated === "partial") return "partial";
  if (stated) return stated;
  if (fromItems) return fromItems;
  if (outcome === "ok") return "committed";
  // retryable / permanent / unknown without an effect flag: no evidence either way.
  return isWrite ? "unknown" : "not_committed";
}

export const seed002Adapter: DialectAdapter = {
  dialect: "seed002",
  detect: (v) => pick.outcome(v.outcome) !== null && ("effect_applied" in v || Array.isArray(v.items)),
  normalize: (v, ctx) => {
    const outcome = pick.outcome(v.outcome) as Outcome; // detect admitted only a known outcome
    const items = readItems(v.items);
    const stated = lookup(effectToCommit, text(v.effect_applied));
    const commit = commitState(outcome, stated, commitFromItems(items), ctx.isWrite);
    const retryAfter = seconds(v.retry_after_s);
    const deadlineLeft = seconds(v.deadline_left_s);
    // "When the budget is out, the return is retryable with deadline_left_s: 0 —
    // which the caller must treat as stop and report, not try once more."
    const budgetSpent = deadlineLeft === 0;

    let next: NextAction;
    if (commit === "unknown") next = "verify_operation";
    else if (commit === "partial")
      next = items.some((i) => i.applied === "unknown") ? "verify_operation" : "choose_alternative";
    else if (outcome === "ok" || commit === "committed") next = "none";
    else if (budgetSpent) next = "escalate";
    else if (outcome === "retryable") next = "wait_and_retry";
    else next = "choose_alternative";

    const retryable = next === "wait_and_retry";
    const ignored: Hints = [];
    const notBefore = retryable ? delayHint(ctx, v.retry_after_s, "retry_after_s", ignored) : null;
    return withHints(
      success({
        outcome: commit === "unknown" ? "unknown" : outcome,
        commit_state: commit,
        code: text(v.code),
        next_action: next,
        retry: {
          directive: retryable ? "after_delay" : "never",
          not_before: notBefore,
          max_attempts_remaining: budgetSpent || commit === "unknown" ? 0 : null,
        },
        dispatch_stage: commit === "unknown" ? "dispatch_unconfirmed" : "dispatched",
        agent_message: text(v.message),
        safe_details: compact({
          attempt_id: text(v.attempt_id),
          retry_after_s: retryAfter,
          deadline_left_s: deadlineLeft,
        }),
        items,
      }),
      ignored,
    );
  },
};
