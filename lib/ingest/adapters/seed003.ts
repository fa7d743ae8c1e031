import { compact, failureWithoutEvidence, inputError, refusal, success, text, type DialectAdapter } from "./shared";

// source article 003 (docs/outcome-model.md)'s tool error: kind "tool_error", is_error, recovery.
// stop_turn means the handler failed unexpectedly: a write's completion cannot be confirmed.

export const seed003Adapter: DialectAdapter = {
  dialect: "seed003",
  detect: (v) => v.kind === "tool_error" && typeof v.is_error === "boolean",
  normalize: (v, ctx) => {
    const common = {
      code: text(v.error),
      agent_message: text(v.message),
      safe_details: compact({
        recovery: text(v.recovery),
        recoverable: typeof v.recoverable === "boolean" ? v.recoverable : undefined,
      }),
    };
    if (v.is_error === false) return success(common);
    switch (v.recovery) {
      case "correct_arguments":
        return inputError(common);
      case "choose_alternative":
        return refusal({ ...common, next_action: "choose_alternative" });
      default:
        return ctx.isWrite
          ? failureWithoutEvidence(ctx, common)
          : refusal({ ...common, next_action: "choose_alternative" });
    }
  },
};
