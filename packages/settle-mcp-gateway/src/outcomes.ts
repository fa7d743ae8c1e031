// What the gateway reports to Settle about one forwarded call: the envelope
// of its outcome record, in the `mcp` dialect (a CallToolResult). A result
// the server sent is reported as received. When no result came back, the
// gateway writes an `isError` result itself, without any claim of its own
// about the effect: Settle reads an MCP error of a write as unknown (never a
// failure) and of a read as not committed (docs/outcome-model.md §3). Only two cases carry
// evidence, in Settle's own envelope inside structuredContent: the server
// refused the request at the protocol level (invalid params, unknown
// method), and the request never left the gateway.

export type JsonRpcError = { code: number; message: string; data?: unknown };

/** What came back from the server for one tools/call. */
export type UpstreamAnswer =
  | { kind: "result"; result: Record<string, unknown> }
  | { kind: "error"; error: JsonRpcError }
  /** Sent, and no answer: the stream broke, the server exited, the time ran out, or the client cancelled. */
  | { kind: "lost"; why: LostWhy; detail: string }
  /** Provably never reached the server (it could not be started or connected to). */
  | { kind: "not_sent"; detail: string }
  /** The server's HTTP endpoint refused the request before running anything (4xx: an expired session, a bad header). */
  | { kind: "refused"; status: number; detail: string };

export type LostWhy = "stream_broken" | "crashed" | "timeout" | "cancelled";

const lostText: Record<LostWhy, string> = {
  stream_broken: "the response stream broke after the call was sent",
  crashed: "the server exited after the call was sent",
  timeout: "no answer came within the call timeout",
  cancelled: "the client cancelled the call after it was sent",
};

export function describeLost(why: LostWhy): string {
  return lostText[why];
}

/** JSON-RPC codes with which a server refuses a request before running it. */
export const refusedBeforeRunning = new Set([-32700, -32600, -32601, -32602]);

function settleEnvelope(fields: {
  code: string;
  category: string;
  commit_state: string;
  directive: string;
  next_action: string;
  message: string;
  dispatch_stage?: string;
  details?: Record<string, unknown>;
}) {
  return {
    ok: false,
    code: fields.code,
    category: fields.category,
    commit_state: fields.commit_state,
    retry: { directive: fields.directive, not_before: null, max_attempts_remaining: null },
    next_action: fields.next_action,
    ...(fields.dispatch_stage ? { dispatch_stage: fields.dispatch_stage } : {}),
    safe_details: fields.details ?? {},
    agent_message: fields.message,
    user_message: fields.message,
  };
}

/** The outcome record's envelope for what the server answered, or did not. */
export function outcomeEnvelope(tool: string, answer: UpstreamAnswer): Record<string, unknown> {
  switch (answer.kind) {
    case "result":
      if (answer.result.resultType !== "input_required") return answer.result;
      // 2026-07-28: the server asks the client for input first; the client's answer is a new request (a new attempt).
      return {
        content: [{ type: "text", text: `settle-mcp: the server asked the client for input before ${tool} goes on` }],
        isError: true,
        structuredContent: settleEnvelope({
          code: "INPUT_REQUIRED",
          category: "validation",
          commit_state: "not_committed",
          directive: "after_input_fix",
          next_action: "correct_input",
          message: `The server needs the client's input (${Object.keys((answer.result.inputRequests as object | undefined) ?? {}).join(", ") || "requestState"}) before ${tool} goes on.`,
        }),
      };
    case "error": {
      const text = `JSON-RPC error ${answer.error.code} from the server: ${answer.error.message}`.slice(0, 1000);
      if (!refusedBeforeRunning.has(answer.error.code)) return { content: [{ type: "text", text }], isError: true };
      return {
        content: [{ type: "text", text }],
        isError: true,
        structuredContent: settleEnvelope({
          code: answer.error.code === -32601 ? "METHOD_NOT_FOUND" : "INVALID_REQUEST",
          category: "validation",
          commit_state: "not_committed",
          directive: "after_input_fix",
          next_action: "correct_input",
          dispatch_stage: "pre_dispatch",
          message:
            `The server refused ${tool} before running it (JSON-RPC ${answer.error.code}): ${answer.error.message}`.slice(
              0,
              1000,
            ),
          details: { jsonrpc_code: answer.error.code },
        }),
      };
    }
    case "lost":
      return {
        content: [
          {
            type: "text",
            text: `settle-mcp: ${lostText[answer.why]} (${answer.detail}); whether ${tool} took effect is unknown.`.slice(
              0,
              1000,
            ),
          },
        ],
        isError: true,
      };
    case "refused":
      return {
        content: [
          { type: "text", text: `settle-mcp: the server refused ${tool} before running it (${answer.detail})` },
        ],
        isError: true,
        structuredContent: settleEnvelope({
          code: "UPSTREAM_REFUSED",
          category: "dependency",
          commit_state: "not_committed",
          directive: "allowed",
          next_action: "wait_and_retry",
          dispatch_stage: "pre_dispatch",
          message: `The server refused ${tool} before running it (${answer.detail}).`,
          details: { http_status: answer.status },
        }),
      };
    case "not_sent":
      return {
        content: [{ type: "text", text: `settle-mcp: ${tool} was not sent: ${answer.detail}` }],
        isError: true,
        structuredContent: settleEnvelope({
          code: "UPSTREAM_UNREACHABLE",
          category: "dependency",
          commit_state: "not_committed",
          directive: "after_delay",
          next_action: "wait_and_retry",
          dispatch_stage: "pre_dispatch",
          message: `The gateway could not reach the server; ${tool} was not sent (${answer.detail}).`,
        }),
      };
  }
}

/** What the gateway writes with the intent: the call as sent, and what the gateway decided. */
export function intentEnvelope(
  request: { name: string; arguments?: unknown },
  decision: string,
  effect: { effect: string; source: string },
) {
  return {
    gateway: "settle-mcp",
    decision,
    effect_class: effect.effect,
    effect_source: effect.source,
    request: { method: "tools/call", params: { name: request.name, arguments: request.arguments ?? {} } },
  };
}
