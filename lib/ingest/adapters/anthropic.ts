import { failureWithoutEvidence, success, type WrapperAdapter } from "./shared";
import { firstText, jsonCandidates } from "./wrapped-text";

// Anthropic Messages `tool_result` block: content (string or blocks) + is_error.

export const anthropicAdapter: WrapperAdapter = {
  dialect: "anthropic",
  detect: (v) => v.type === "tool_result" && typeof v.tool_use_id === "string",
  inner: (v) => jsonCandidates(v.content),
  normalize: (v, ctx) => {
    const agent_message = firstText(v.content);
    const safe_details = { tool_use_id: String(v.tool_use_id) };
    return v.is_error === true
      ? failureWithoutEvidence(ctx, { agent_message, safe_details })
      : success({ agent_message, safe_details });
  },
};
