import { describe, it } from "vitest";
import { checkSpan, SPAN, TRACE, type SpanCase } from "./helpers";

// OpenInference (Phoenix) tool spans, LangChain.js instrumentation, as
// shared/notes/otel-tool-spans.md records them: no tool-call id; the result
// is a serialized ToolMessage; a failure is ERROR with the error text and stack.

const toolMessage = (content: string) =>
  JSON.stringify({
    lc: 1,
    type: "constructor",
    id: ["langchain_core", "messages", "ToolMessage"],
    kwargs: { content, tool_call_id: "call_abc", name: "send_email", status: "success" },
  });

const tool = (attrs: Record<string, string> = {}) => ({
  "openinference.span.kind": "TOOL",
  "tool.name": "send_email",
  "input.value": '{"to":"ana@example.com","subject":"Invoice"}',
  "input.mime_type": "application/json",
  ...attrs,
});

const id = `${TRACE}:${SPAN}`;

const cases: SpanCase[] = [
  {
    name: "a tool that returned: committed, invocation trace:span",
    span: {
      name: "send_email",
      attributes: tool({ "output.value": toolMessage("sent"), "output.mime_type": "application/json" }),
      status: { code: 1 },
    },
    expect: {
      convention: "otel-openinference",
      tool: "send_email",
      invocationId: id,
      outcome: { dialect: "otel-openinference", commit_state: "committed" },
      arguments: { to: "ana@example.com", subject: "Invoice" },
    },
  },
  {
    name: "a single-argument input flattened to its text stays text",
    span: {
      name: "send_email",
      attributes: tool({ "input.value": "ana@example.com", "input.mime_type": "text/plain" }),
    },
    expect: {
      convention: "otel-openinference",
      tool: "send_email",
      invocationId: id,
      outcome: { commit_state: "committed" },
      arguments: "ana@example.com",
    },
  },
  {
    name: "a write that failed: unknown, verify; the stack is shown, not read",
    span: {
      name: "send_email",
      attributes: tool(),
      status: { code: 2, message: "Error: SMTP timeout\n    at send (tools.js:3:9)" },
      events: [{ name: "exception", attributes: { "exception.message": "SMTP timeout" } }],
    },
    expect: {
      convention: "otel-openinference",
      tool: "send_email",
      invocationId: id,
      outcome: {
        commit_state: "unknown",
        next_action: "verify_operation",
        agent_message: "Error: SMTP timeout\n    at send (tools.js:3:9)",
        code: null,
      },
    },
  },
  {
    name: "a ToolMessage whose content is a Settle envelope: that dialect decides",
    span: {
      name: "send_email",
      attributes: tool({
        "output.value": toolMessage(
          JSON.stringify({ ok: false, code: "BOUNCED", commit_state: "not_committed", next_action: "correct_input" }),
        ),
      }),
    },
    expect: {
      convention: "otel-openinference",
      tool: "send_email",
      invocationId: id,
      outcome: {
        dialect: "settle",
        wrapper_dialect: "otel-openinference",
        commit_state: "not_committed",
        code: "BOUNCED",
      },
    },
  },
  {
    name: "CHAIN spans are ignored",
    span: { name: "RunnableSequence", attributes: { "openinference.span.kind": "CHAIN" } },
    expect: null,
  },
  {
    name: "LLM spans are ignored",
    span: { name: "ChatOpenAI", attributes: { "openinference.span.kind": "LLM" } },
    expect: null,
  },
];

describe("otel-openinference adapter (openinference.span.kind = TOOL)", () => {
  for (const c of cases) it(c.name, () => void checkSpan(c));
});
