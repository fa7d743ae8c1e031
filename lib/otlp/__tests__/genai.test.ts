import { describe, expect, it } from "vitest";
import { checkSpan, TRACE, SPAN, type SpanCase } from "./helpers";

// OpenTelemetry GenAI semantic conventions (execute_tool) and MCP clients'
// tools/call spans, as shared/notes/otel-tool-spans.md records them.

const executeTool = (attrs: Record<string, string | number | boolean> = {}) => ({
  "gen_ai.operation.name": "execute_tool",
  "gen_ai.tool.name": "create_order",
  "gen_ai.tool.call.id": "call_mszuSIzqtI65i1wAUOE8w5H4",
  "gen_ai.tool.type": "function",
  "gen_ai.tool.call.arguments": '{"sku":"A-1","qty":2}',
  ...attrs,
});

const mcpCall = (attrs: Record<string, string | number | boolean> = {}) => ({
  "mcp.method.name": "tools/call",
  "gen_ai.tool.name": "refund_payment",
  "jsonrpc.request.id": "7",
  "mcp.session.id": "191c4850af6c49e08843a3f6c80e5046",
  ...attrs,
});

const committed = {
  commit_state: "committed",
  outcome: "ok",
  next_action: "none",
  dialect: "otel-genai",
  wrapper_dialect: null,
} as const;
const unknownWrite = {
  commit_state: "unknown",
  outcome: "unknown",
  next_action: "verify_operation",
  dialect: "otel-genai",
  dispatch_stage: "dispatch_unconfirmed",
} as const;

const cases: SpanCase[] = [
  {
    name: "execute_tool with status OK: committed, the call id is the invocation, arguments kept",
    span: {
      name: "execute_tool create_order",
      attributes: executeTool({ "gen_ai.tool.call.result": '{"order_id":"o-9"}' }),
      status: { code: 1 },
    },
    expect: {
      convention: "otel-genai",
      tool: "create_order",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      effectClass: null,
      outcome: committed,
      arguments: { sku: "A-1", qty: 2 },
      result: { order_id: "o-9" },
    },
  },
  {
    name: "execute_tool UNSET without error: committed",
    span: { name: "execute_tool create_order", attributes: executeTool() },
    expect: {
      convention: "otel-genai",
      tool: "create_order",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      outcome: committed,
    },
  },
  {
    name: "a write that timed out (ERROR, error.type=timeout): unknown, verify; the message shown, not read",
    span: {
      name: "execute_tool create_order",
      attributes: executeTool({ "error.type": "timeout" }),
      status: { code: 2, message: "the order was not created: upstream timed out" },
    },
    expect: {
      convention: "otel-genai",
      tool: "create_order",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      outcome: { ...unknownWrite, code: "timeout", agent_message: "the order was not created: upstream timed out" },
    },
  },
  {
    name: "UNSET with error.type: still a failure",
    span: { name: "execute_tool create_order", attributes: executeTool({ "error.type": "500" }) },
    expect: {
      convention: "otel-genai",
      tool: "create_order",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      outcome: { ...unknownWrite, code: "500" },
    },
  },
  {
    name: "a datastore tool is a read: its failure is not committed",
    span: {
      name: "execute_tool search_orders",
      attributes: executeTool({
        "gen_ai.tool.name": "search_orders",
        "gen_ai.tool.type": "datastore",
        "error.type": "timeout",
      }),
      status: { code: 2 },
    },
    expect: {
      convention: "otel-genai",
      tool: "search_orders",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      effectClass: "read",
      outcome: { commit_state: "not_committed", next_action: "wait_and_retry" },
    },
  },
  {
    name: "the catalog outranks gen_ai.tool.type: a datastore tool listed as a write fails unknown",
    span: {
      name: "execute_tool search_orders",
      attributes: executeTool({
        "gen_ai.tool.name": "upsert_index",
        "gen_ai.tool.type": "datastore",
        "error.type": "timeout",
      }),
      status: { code: 2 },
    },
    catalog: [{ pattern: "upsert_*", effect_class: "create" }],
    expect: {
      convention: "otel-genai",
      tool: "upsert_index",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      effectClass: "create",
      outcome: { commit_state: "unknown", next_action: "verify_operation" },
    },
  },
  {
    name: "a failed write whose result is a Settle envelope: that dialect decides",
    span: {
      name: "execute_tool create_order",
      attributes: executeTool({
        "error.type": "tool_error",
        "gen_ai.tool.call.result": JSON.stringify({
          ok: false,
          code: "OUT_OF_STOCK",
          commit_state: "not_committed",
          next_action: "choose_alternative",
          retry: { directive: "never" },
        }),
      }),
      status: { code: 2 },
    },
    expect: {
      convention: "otel-genai",
      tool: "create_order",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      outcome: {
        dialect: "settle",
        wrapper_dialect: "otel-genai",
        commit_state: "not_committed",
        next_action: "choose_alternative",
        code: "OUT_OF_STOCK",
      },
    },
  },
  {
    name: "MCP tools/call that returned: committed, no call id so trace:span",
    span: { name: "tools/call refund_payment", kind: 3, attributes: mcpCall() },
    expect: { convention: "otel-genai", tool: "refund_payment", invocationId: `${TRACE}:${SPAN}`, outcome: committed },
  },
  {
    name: "MCP tools/call with isError (error.type=tool_error) and its CallToolResult: read as MCP, a write is unknown",
    span: {
      name: "tools/call refund_payment",
      kind: 3,
      attributes: mcpCall({
        "error.type": "tool_error",
        "gen_ai.tool.call.result": JSON.stringify({
          content: [{ type: "text", text: "MCP error -32602: refund not allowed" }],
          isError: true,
        }),
      }),
      status: { code: 2 },
    },
    expect: {
      convention: "otel-genai",
      tool: "refund_payment",
      invocationId: `${TRACE}:${SPAN}`,
      outcome: {
        dialect: "mcp",
        wrapper_dialect: "otel-genai",
        commit_state: "unknown",
        next_action: "verify_operation",
        agent_message: "MCP error -32602: refund not allowed",
      },
    },
  },
  {
    name: "an MCP CallToolResult holding a Settle envelope: the inner one decides",
    span: {
      name: "tools/call refund_payment",
      kind: 3,
      attributes: mcpCall({
        "gen_ai.tool.call.result": JSON.stringify({
          content: [
            {
              type: "text",
              text: JSON.stringify({
                ok: false,
                code: "CARD_DECLINED",
                commit_state: "not_committed",
                next_action: "escalate",
              }),
            },
          ],
          isError: true,
        }),
      }),
    },
    expect: {
      convention: "otel-genai",
      tool: "refund_payment",
      invocationId: `${TRACE}:${SPAN}`,
      outcome: { dialect: "settle", wrapper_dialect: "mcp", commit_state: "not_committed", code: "CARD_DECLINED" },
    },
  },
  {
    name: "the tool name from the span name when the attribute is missing",
    span: { name: "tools/call send_invoice", kind: 3, attributes: { "mcp.method.name": "tools/call" } },
    expect: { convention: "otel-genai", tool: "send_invoice", invocationId: `${TRACE}:${SPAN}`, outcome: committed },
  },
  {
    name: "a span that has not ended is an intent only",
    span: { name: "execute_tool create_order", attributes: executeTool(), end: false },
    expect: { convention: "otel-genai", tool: "create_order", invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4" },
  },
  {
    name: "a configured attribute names the task",
    span: { name: "execute_tool create_order", attributes: executeTool({ "session.id": "ord-7741" }) },
    taskAttribute: "session.id",
    expect: {
      convention: "otel-genai",
      tool: "create_order",
      invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
      taskId: "ord-7741",
      outcome: committed,
    },
  },
  {
    name: "a server's tools/call span is not the agent's attempt",
    span: { name: "tools/call refund_payment", kind: 2, attributes: mcpCall() },
    expect: null,
  },
  {
    name: "chat spans are ignored",
    span: {
      name: "chat gpt-4o",
      kind: 3,
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" },
    },
    expect: null,
  },
  {
    name: "invoke_agent spans are ignored",
    span: {
      name: "invoke_agent billing",
      attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "billing" },
    },
    expect: null,
  },
  {
    name: "other MCP methods are ignored",
    span: { name: "tools/list", kind: 3, attributes: { "mcp.method.name": "tools/list" } },
    expect: null,
  },
];

describe("otel-genai adapter (GenAI execute_tool and MCP tools/call spans)", () => {
  for (const c of cases) it(c.name, () => void checkSpan(c));

  it('keeps the span whole once: on the outcome, with every other attribute as data ("__proto__" too); the intent only names it', () => {
    const [intent, outcome] = checkSpan({
      name: "hostile attribute keys",
      span: {
        name: "execute_tool create_order",
        attributes: executeTool({ ["__proto__"]: "kept", constructor: "also kept" }),
      },
      expect: {
        convention: "otel-genai",
        tool: "create_order",
        invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4",
        outcome: committed,
      },
    });
    const attributes = (outcome!.envelope as { attributes: Record<string, unknown> }).attributes;
    expect(Object.getPrototypeOf(attributes)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(attributes, "__proto__")?.value).toBe("kept");
    expect(attributes.constructor).toBe("also kept");
    expect(attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(intent!.envelope).toEqual({
      otel: { convention: "otel-genai", trace_id: TRACE, span_id: SPAN },
      tool_call_id: "call_mszuSIzqtI65i1wAUOE8w5H4",
    });
    expect(intent!.normalized.safe_details).toEqual({});
  });

  it("an open span's intent carries the span and its arguments", () => {
    const [intent] = checkSpan({
      name: "open span",
      span: { name: "execute_tool create_order", attributes: executeTool(), end: false },
      expect: { convention: "otel-genai", tool: "create_order", invocationId: "call_mszuSIzqtI65i1wAUOE8w5H4" },
    });
    expect(intent!.envelope).toMatchObject({
      otel: { convention: "otel-genai", trace_id: TRACE, span_id: SPAN, end: null },
      arguments: { sku: "A-1", qty: 2 },
    });
    expect(intent!.normalized.safe_details).toMatchObject({ "otel.convention": "otel-genai", "otel.trace_id": TRACE });
  });
});
