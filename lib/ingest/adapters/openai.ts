import { failureWithoutEvidence, success, type WrapperAdapter } from "./shared";
import { firstText, jsonCandidates } from "./wrapped-text";

// OpenAI Responses `function_call_output`: call_id + output. The format has no
// error flag, so an output that is not itself a known envelope is no evidence:
// a write's outcome is unknown, a read simply returned.

export const openaiAdapter: WrapperAdapter = {
  dialect: "openai",
  detect: (v) => v.type === "function_call_output" && typeof v.call_id === "string",
  inner: (v) => jsonCandidates(v.output),
  normalize: (v, ctx) => {
    const agent_message = firstText(v.output);
    const safe_details = { call_id: String(v.call_id) };
    return ctx.isWrite
      ? failureWithoutEvidence(ctx, { agent_message, safe_details })
      : success({ agent_message, safe_details });
  },
};
