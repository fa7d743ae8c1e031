import { compact, failureWithoutEvidence, inputError, refusal, success, text, type DialectAdapter } from "./shared";

// source article 004 (docs/outcome-model.md)'s invocation lifecycle status. A gateway reports what it observed
// (dispatch, evidence), never a business commit it did not see.

const statuses = new Set([
  "post_dispatch_evidence_failed",
  "reconciliation_required",
  "pre_dispatch_rejected",
  "pre_dispatch_rejection",
  "dispatch_not_established",
  "business_failure",
  "confirmed_business_failure",
  "committed",
]);

export const seed004Adapter: DialectAdapter = {
  dialect: "seed004",
  detect: (v) =>
    (typeof v.status === "string" && statuses.has(v.status)) || typeof v.reconciliation_required === "boolean",
  normalize: (v, ctx) => {
    const status = text(v.status);
    const common = {
      code: status,
      agent_message: text(v.message),
      safe_details: compact({
        invocation_id: text(v.invocation_id),
        retryable: typeof v.retryable === "boolean" ? v.retryable : undefined,
        reconciliation_required: typeof v.reconciliation_required === "boolean" ? v.reconciliation_required : undefined,
      }),
    };
    const reconcile = {
      ...common,
      outcome: "unknown" as const,
      commit_state: "unknown" as const,
      next_action: "verify_operation" as const,
      retry: { directive: "never" as const, not_before: null, max_attempts_remaining: 0 },
    };
    // The evidence write failed after dispatch: never retryable, whatever else the envelope says.
    if (status === "post_dispatch_evidence_failed") {
      return { ...success(), ...reconcile, dispatch_stage: "evidence_failed" };
    }
    if (status === "reconciliation_required" || v.reconciliation_required === true) {
      return { ...success(), ...reconcile, dispatch_stage: "dispatched" };
    }
    if (status === "pre_dispatch_rejected" || status === "pre_dispatch_rejection") {
      return inputError({ ...common, category: null, dispatch_stage: "pre_dispatch" });
    }
    if (status === "dispatch_not_established") {
      return failureWithoutEvidence(ctx, { ...common, dispatch_stage: "dispatch_unconfirmed" });
    }
    if (status === "business_failure" || status === "confirmed_business_failure") {
      const retryable = v.retryable === true;
      return refusal({
        ...common,
        outcome: retryable ? "retryable" : "permanent",
        next_action: retryable ? "wait_and_retry" : "escalate",
        retry: { directive: retryable ? "after_delay" : "never", not_before: null, max_attempts_remaining: null },
        dispatch_stage: "dispatched",
      });
    }
    if (status === "committed") return success(common);
    return failureWithoutEvidence(ctx, { ...common, dispatch_stage: "dispatched" });
  },
};
