import { describe, it } from "vitest";
import type { NormalizedAttempt } from "../../outcome/vocabulary";
import { checkSpan, SPAN, TRACE, type SpanCase } from "./helpers";

// Spans whose status is UNSET (or OK) but that say the call failed, in the shapes the real exporters write
// (recorded from ai 6's experimental_telemetry, OpenInference's LangChain.js instrumentation 4.1.1 and the
// OpenTelemetry JS SDK): a failure without evidence of whether a write applied is unknown, never committed; the
// same shapes saying success stay committed. docs/opentelemetry.md lists every signal.

const unknownWrite = { commit_state: "unknown", next_action: "verify_operation" } as const;
const committed = { commit_state: "committed", next_action: "none" } as const;

const genai = (attrs: Record<string, string>) => ({
  "gen_ai.operation.name": "execute_tool",
  "gen_ai.tool.name": "charge_card",
  "gen_ai.tool.call.id": "call_1",
  "gen_ai.tool.call.arguments": '{"amount":42}',
  ...attrs,
});
const genaiCase = (
  name: string,
  attrs: Record<string, string>,
  outcome: object,
  extra: Partial<SpanCase> = {},
): SpanCase => ({
  name,
  span: { name: "execute_tool charge_card", attributes: genai(attrs), status: { code: 0 } },
  expect: {
    convention: "otel-genai",
    tool: "charge_card",
    invocationId: "call_1",
    outcome: { dialect: "otel-genai", ...outcome },
  },
  ...extra,
});

const aiToolCall = (result: string): SpanCase["span"] => ({
  name: "ai.toolCall",
  attributes: {
    "operation.name": "ai.toolCall",
    "ai.operationId": "ai.toolCall",
    "ai.toolCall.name": "charge",
    "ai.toolCall.id": "c1",
    "ai.toolCall.args": "{}",
    "ai.toolCall.result": result,
  },
  status: { code: 0 },
});

// OpenInference 4.1.1 wraps the serialized ToolMessage in {"output": …}; its span is OK even when the message says error.
const openinferenceOutput = (status: "error" | "success", content: string, wrapped = true) => {
  const message = {
    lc: 1,
    type: "constructor",
    id: ["langchain_core", "messages", "ToolMessage"],
    kwargs: { content, tool_call_id: "tc_1", status, additional_kwargs: {}, response_metadata: {} },
  };
  return JSON.stringify(wrapped ? { output: message } : message);
};
const oiSpan = (output: string): SpanCase["span"] => ({
  name: "send_invoice",
  attributes: {
    "openinference.span.kind": "TOOL",
    "tool.name": "send_invoice",
    "input.value": "a",
    "input.mime_type": "text/plain",
    "output.value": output,
    "output.mime_type": "application/json",
  },
  status: { code: 1 },
});
const oi = (outcome: Partial<NormalizedAttempt>): NonNullable<SpanCase["expect"]> => ({
  convention: "otel-openinference",
  tool: "send_invoice",
  invocationId: `${TRACE}:${SPAN}`,
  outcome: { dialect: "otel-openinference", ...outcome } as Partial<NormalizedAttempt>,
});

const cases: SpanCase[] = [
  ...["error", "ERROR", "failed", "failure"].map((status) =>
    genaiCase(
      `gen_ai.tool.call.status = ${status}: unknown for a write`,
      { "gen_ai.tool.call.status": status },
      { ...unknownWrite, code: status },
    ),
  ),
  ...["success", "ok", "OK", "succeeded", "completed"].map((status) =>
    genaiCase(`gen_ai.tool.call.status = ${status}: committed`, { "gen_ai.tool.call.status": status }, committed),
  ),
  genaiCase(
    "gen_ai.tool.call.status = error on a read: not committed",
    { "gen_ai.tool.call.status": "error", "gen_ai.tool.type": "datastore" },
    { commit_state: "not_committed" },
  ),
  genaiCase(
    "a result with success: false: unknown, its message shown",
    { "gen_ai.tool.call.result": '{"success":false,"message":"card declined"}' },
    { ...unknownWrite, agent_message: "card declined" },
  ),
  genaiCase(
    "a result with ok: false: unknown",
    { "gen_ai.tool.call.result": '{"ok":false,"reason":"upstream 502"}' },
    unknownWrite,
  ),
  genaiCase(
    "a result with an error member: unknown, the error's message shown",
    { "gen_ai.tool.call.result": '{"error":{"code":"TIMEOUT","message":"gateway timeout"}}' },
    { ...unknownWrite, agent_message: "gateway timeout" },
  ),
  genaiCase(
    "a result with error text: unknown",
    { "gen_ai.tool.call.result": '{"error":"gateway timeout"}' },
    { ...unknownWrite, agent_message: "gateway timeout" },
  ),
  genaiCase(
    "a result with success: true: committed",
    { "gen_ai.tool.call.result": '{"success":true,"charge":"ch_1"}' },
    committed,
  ),
  genaiCase(
    "a result with ok: true and error: null: committed",
    { "gen_ai.tool.call.result": '{"ok":true,"error":null}' },
    committed,
  ),
  genaiCase(
    "a result in a dialect Settle reads still decides (source article 001: not committed, correct input)",
    {
      "gen_ai.tool.call.result":
        '{"code":"INVALID_AMOUNT","message":"no","retryable":false,"hint":"h","field":"amount"}',
      "gen_ai.tool.call.status": "error",
    },
    { dialect: "seed001", commit_state: "not_committed", next_action: "correct_input" },
  ),
  {
    name: "the AI SDK's ai.toolCall.result with success: false (status UNSET): unknown",
    span: aiToolCall('{"success":false,"error":"card declined"}'),
    expect: {
      convention: "otel-vercel-ai",
      tool: "charge",
      invocationId: "c1",
      outcome: { dialect: "otel-vercel-ai", ...unknownWrite, agent_message: "card declined" },
    },
  },
  {
    name: "the AI SDK's ai.toolCall.result with success: true: committed",
    span: aiToolCall('{"success":true,"charge":"ch_1"}'),
    expect: {
      convention: "otel-vercel-ai",
      tool: "charge",
      invocationId: "c1",
      outcome: { dialect: "otel-vercel-ai", ...committed },
    },
  },
  {
    name: "OpenInference: a LangChain ToolMessage with status error in output.value (the span says OK): unknown",
    span: oiSpan(openinferenceOutput("error", "gateway timeout")),
    expect: oi({ ...unknownWrite, agent_message: "gateway timeout" }),
  },
  {
    name: "OpenInference: the same without the output wrapper (older instrumentations): unknown",
    span: oiSpan(openinferenceOutput("error", "gateway timeout", false)),
    expect: oi(unknownWrite),
  },
  {
    name: "OpenInference: a ToolMessage with status success: committed",
    span: oiSpan(openinferenceOutput("success", "sent")),
    expect: oi(committed),
  },
  {
    name: "OpenInference: a ToolMessage whose content is a known envelope still decides by it",
    span: oiSpan(openinferenceOutput("success", '{"content":[{"type":"text","text":"declined"}],"isError":true}')),
    expect: oi({ dialect: "mcp", commit_state: "unknown" }),
  },
];

describe("failure signals in spans that do not say ERROR", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    checkSpan(c);
  });
});
