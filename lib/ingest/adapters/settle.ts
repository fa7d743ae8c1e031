import type { CommitState, NextAction, Outcome, RetryDirective } from "../../outcome/vocabulary";
import {
  countHint,
  failureWithoutEvidence,
  flatDetails,
  pick,
  readItems,
  success,
  text,
  timeHint,
  withHints,
  type DialectAdapter,
  type Hints,
} from "./shared";

// source article 000 (docs/outcome-model.md)'s ToolError / ToolSuccess, which is also Settle's own envelope.
// The envelope states its commit state, so it is trusted as written; only
// what it leaves out is filled in, and never towards a definite commit state.

function nextActionFor(commit: CommitState, directive: RetryDirective | null): NextAction {
  if (commit === "unknown" || commit === "partial") return "verify_operation";
  if (commit === "committed") return "none";
  if (directive === "after_input_fix") return "correct_input";
  if (directive === "after_delay" || directive === "allowed") return "wait_and_retry";
  return "escalate";
}

function outcomeFor(commit: CommitState, next: NextAction, directive: RetryDirective): Outcome {
  if (commit === "unknown") return "unknown";
  if (next === "wait_and_retry" || directive === "after_delay" || directive === "allowed") return "retryable";
  return "permanent";
}

export const settleAdapter: DialectAdapter = {
  dialect: "settle",
  detect: (v) => typeof v.ok === "boolean" && "commit_state" in v,
  normalize: (v, ctx) => {
    const common = {
      code: text(v.code),
      category: pick.category(v.category),
      safe_details: flatDetails(v.safe_details),
      agent_message: text(v.agent_message),
      user_message: text(v.user_message),
      items: readItems(v.items),
      dispatch_stage: pick.dispatchStage(v.dispatch_stage),
    };
    if (v.ok === true) {
      return success({
        ...common,
        commit_state: pick.commitState(v.commit_state) ?? "committed",
        dispatch_stage: common.dispatch_stage ?? "dispatched",
      });
    }
    const stated = pick.commitState(v.commit_state);
    const retry = typeof v.retry === "object" && v.retry !== null ? (v.retry as Record<string, unknown>) : {};
    const directive = pick.directive(retry.directive);
    if (stated === null) {
      return failureWithoutEvidence(ctx, common);
    }
    const next = pick.nextAction(v.next_action) ?? nextActionFor(stated, directive);
    const finalDirective =
      directive ?? (stated === "unknown" ? "never" : next === "wait_and_retry" ? "after_delay" : "never");
    const ignored: Hints = [];
    return withHints(
      {
        ...common,
        outcome: outcomeFor(stated, next, finalDirective),
        commit_state: stated,
        next_action: next,
        retry: {
          directive: finalDirective,
          not_before: timeHint(retry.not_before, "retry.not_before", ignored),
          max_attempts_remaining: countHint(retry.max_attempts_remaining, "retry.max_attempts_remaining", ignored),
        },
      },
      ignored,
    );
  },
};
