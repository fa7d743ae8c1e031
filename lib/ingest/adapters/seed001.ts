import { compact, failureWithoutEvidence, inputError, refusal, text, type DialectAdapter } from "./shared";

// source article 001 (docs/outcome-model.md)'s five-field error: code, message, retryable, hint, field.
// `retryable: true` says a retry may work, not that the write did not land.

export const seed001Adapter: DialectAdapter = {
  dialect: "seed001",
  detect: (v) =>
    typeof v.code === "string" && typeof v.retryable === "boolean" && "message" in v && ("hint" in v || "field" in v),
  normalize: (v, ctx) => {
    const field = text(v.field);
    const common = {
      code: text(v.code),
      agent_message: text(v.message),
      safe_details: compact({ field, hint: text(v.hint) }),
    };
    if (field) {
      return inputError({
        ...common,
        retry: { directive: "after_input_fix", not_before: null, max_attempts_remaining: 1 },
      });
    }
    if (v.retryable === false) {
      return refusal({ ...common, retry: { directive: "never", not_before: null, max_attempts_remaining: 0 } });
    }
    return failureWithoutEvidence(ctx, common);
  },
};
