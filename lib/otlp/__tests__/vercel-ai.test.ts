import { describe, it } from "vitest";
import { checkSpan, type SpanCase } from "./helpers";

// The Vercel AI SDK's ai.toolCall spans (ai 6, experimental_telemetry), as
// shared/notes/otel-tool-spans.md records them: a tool that returned ends
// UNSET with ai.toolCall.result; one that threw ends ERROR with its message
// and an exception event, no error.type.

const toolCall = (attrs: Record<string, string> = {}) => ({
  "operation.name": "ai.toolCall",
  "ai.operationId": "ai.toolCall",
  "resource.name": "ai.toolCall",
  "ai.toolCall.name": "book_flight",
  "ai.toolCall.id": "call-1",
  "ai.toolCall.args": '{"flight":"LH400","seat":"12A"}',
  ...attrs,
});

const cases: SpanCase[] = [
  {
    name: "a tool that returned (status UNSET, a result): committed",
    span: {
      name: "ai.toolCall",
      attributes: toolCall({ "ai.toolCall.result": '{"booking":"BK-1"}' }),
      status: { code: 0 },
    },
    expect: {
      convention: "otel-vercel-ai",
      tool: "book_flight",
      invocationId: "call-1",
      outcome: { dialect: "otel-vercel-ai", commit_state: "committed", next_action: "none" },
      arguments: { flight: "LH400", seat: "12A" },
      result: { booking: "BK-1" },
    },
  },
  {
    name: "a write that threw a timeout: unknown, verify; the exception kept as text",
    span: {
      name: "ai.toolCall",
      attributes: toolCall(),
      status: { code: 2, message: "Gateway timeout after 30000 ms" },
      events: [
        {
          name: "exception",
          attributes: {
            "exception.type": "TimeoutError",
            "exception.message": "Gateway timeout after 30000 ms",
            "exception.stacktrace": "TimeoutError: Gateway timeout\n    at execute",
          },
        },
      ],
    },
    expect: {
      convention: "otel-vercel-ai",
      tool: "book_flight",
      invocationId: "call-1",
      outcome: {
        dialect: "otel-vercel-ai",
        commit_state: "unknown",
        next_action: "verify_operation",
        code: "TimeoutError",
        agent_message: "Gateway timeout after 30000 ms",
      },
      result: null,
    },
  },
  {
    name: "a listed read that threw: not committed",
    span: {
      name: "ai.toolCall",
      attributes: toolCall({ "ai.toolCall.name": "get_weather" }),
      status: { code: 2, message: "fetch failed" },
    },
    catalog: [{ pattern: "get_*", effect_class: "read" }],
    expect: {
      convention: "otel-vercel-ai",
      tool: "get_weather",
      invocationId: "call-1",
      effectClass: "read",
      outcome: { commit_state: "not_committed", next_action: "wait_and_retry" },
    },
  },
  {
    name: "a tool that returned an error in a known dialect (RFC 9457 422): that dialect decides",
    span: {
      name: "ai.toolCall",
      attributes: toolCall({
        "ai.toolCall.result": JSON.stringify({
          type: "https://example.com/probs/seat",
          title: "Seat taken",
          status: 422,
          detail: "Seat 12A is taken",
        }),
      }),
    },
    expect: {
      convention: "otel-vercel-ai",
      tool: "book_flight",
      invocationId: "call-1",
      outcome: { dialect: "rfc9457", wrapper_dialect: "otel-vercel-ai", commit_state: "not_committed" },
    },
  },
  {
    name: "ai.generateText is a model span",
    span: {
      name: "ai.generateText",
      attributes: { "operation.name": "ai.generateText", "ai.operationId": "ai.generateText" },
    },
    expect: null,
  },
  {
    name: "ai.generateText.doGenerate lists the model's tool calls but executes none",
    span: {
      name: "ai.generateText.doGenerate",
      attributes: {
        "operation.name": "ai.generateText.doGenerate",
        "ai.operationId": "ai.generateText.doGenerate",
        "ai.response.toolCalls": '[{"toolCallId":"call-1","toolName":"book_flight"}]',
      },
    },
    expect: null,
  },
];

describe("otel-vercel-ai adapter (ai.toolCall spans)", () => {
  for (const c of cases) it(c.name, () => void checkSpan(c));
});
