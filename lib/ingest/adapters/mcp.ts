import { failureWithoutEvidence, isRecord, success, type WrapperAdapter } from "./shared";
import { firstText, jsonCandidates } from "./wrapped-text";

// MCP CallToolResult: content[] + isError (+ structuredContent). isError says
// the tool failed, not whether its effect landed; a text such as
// "MCP error -32602" could be written by any tool, so it is never parsed.

export const mcpAdapter: WrapperAdapter = {
  dialect: "mcp",
  detect: (v) =>
    Array.isArray(v.content) &&
    v.content.every((part) => isRecord(part) && typeof part.type === "string") &&
    v.type === undefined,
  inner: (v) => [...(isRecord(v.structuredContent) ? [v.structuredContent] : []), ...jsonCandidates(v.content)],
  normalize: (v, ctx) => {
    const agent_message = firstText(v.content);
    return v.isError === true ? failureWithoutEvidence(ctx, { agent_message }) : success({ agent_message });
  },
};
