import { describe, it } from "vitest";
import { outcomeUnknownExample } from "../../../outcome/example-envelopes";
import { check, type Case } from "./helpers";

const cases: Case[] = [
  {
    name: "MCP isError with plain text: a write's outcome is unknown",
    envelope: { content: [{ type: "text", text: "Error: upstream timed out" }], isError: true },
    expect: {
      dialect: "mcp",
      wrapper_dialect: null,
      commit_state: "unknown",
      next_action: "verify_operation",
      agent_message: "Error: upstream timed out",
    },
  },
  {
    name: "MCP isError with 'MCP error -32602' text is not read as an input error",
    envelope: { content: [{ type: "text", text: "MCP error -32602: Invalid params" }], isError: true },
    expect: { dialect: "mcp", commit_state: "unknown", next_action: "verify_operation" },
  },
  {
    name: "MCP isError on a read: nothing changed",
    read: true,
    envelope: { content: [{ type: "text", text: "boom" }], isError: true },
    expect: { commit_state: "not_committed", next_action: "wait_and_retry" },
  },
  {
    name: "MCP success",
    envelope: { content: [{ type: "text", text: "created invoice inv_1" }] },
    expect: { dialect: "mcp", commit_state: "committed", outcome: "ok" },
  },
  {
    name: "MCP text content holding a source article 000 (docs/outcome-model.md) envelope is unwrapped",
    envelope: { content: [{ type: "text", text: JSON.stringify(outcomeUnknownExample) }], isError: true },
    expect: { dialect: "settle", wrapper_dialect: "mcp", code: "OUTCOME_UNKNOWN", commit_state: "unknown" },
  },
  {
    name: "MCP structuredContent holding a source article 001 (docs/outcome-model.md) error decides",
    envelope: {
      content: [{ type: "text", text: "see structured" }],
      structuredContent: {
        code: "missing_required_field",
        message: "no destination",
        retryable: false,
        hint: "add it",
        field: "destination",
      },
      isError: true,
    },
    expect: { dialect: "seed001", wrapper_dialect: "mcp", commit_state: "not_committed", next_action: "correct_input" },
  },
  {
    name: "Anthropic tool_result with is_error and source article 003 (docs/outcome-model.md) JSON content",
    envelope: {
      type: "tool_result",
      tool_use_id: "toolu_01A",
      is_error: true,
      content: JSON.stringify({
        kind: "tool_error",
        is_error: true,
        error: "invalid",
        recovery: "correct_arguments",
        message: "bad date",
      }),
    },
    expect: { dialect: "seed003", wrapper_dialect: "anthropic", next_action: "correct_input" },
  },
  {
    name: "Anthropic tool_result is_error with text blocks: unknown for a write",
    envelope: {
      type: "tool_result",
      tool_use_id: "toolu_01B",
      is_error: true,
      content: [{ type: "text", text: "timeout" }],
    },
    expect: { dialect: "anthropic", commit_state: "unknown", safe_details: { tool_use_id: "toolu_01B" } },
  },
  {
    name: "Anthropic tool_result success",
    envelope: { type: "tool_result", tool_use_id: "toolu_01C", content: "done" },
    expect: { dialect: "anthropic", commit_state: "committed" },
  },
  {
    name: "OpenAI function_call_output with a serialized source article 002 (docs/outcome-model.md) error",
    envelope: {
      type: "function_call_output",
      call_id: "call_123",
      output: JSON.stringify({ outcome: "retryable", effect_applied: "no", retry_after_s: 30 }),
    },
    expect: {
      dialect: "seed002",
      wrapper_dialect: "openai",
      commit_state: "not_committed",
      next_action: "wait_and_retry",
    },
  },
  {
    name: "OpenAI output in prose is no evidence for a write",
    envelope: { type: "function_call_output", call_id: "call_124", output: "Invoice created successfully" },
    expect: { dialect: "openai", commit_state: "unknown", next_action: "verify_operation" },
  },
  {
    name: "OpenAI output for a read simply returned",
    read: true,
    envelope: { type: "function_call_output", call_id: "call_125", output: "76 kg" },
    expect: { dialect: "openai", commit_state: "committed", outcome: "ok" },
  },
  {
    name: "unrecognized envelope: kept, unknown for a write",
    envelope: { error: "tool failed" },
    expect: { dialect: "unrecognized", commit_state: "unknown", next_action: "verify_operation" },
  },
  {
    name: "unrecognized envelope on a read: not committed",
    read: true,
    envelope: "request failed",
    expect: { dialect: "unrecognized", commit_state: "not_committed" },
  },
  {
    name: "a JSON string envelope is parsed",
    envelope: JSON.stringify({ outcome: "ok", effect_applied: "yes" }),
    expect: { dialect: "seed002", commit_state: "committed" },
  },
  {
    name: "NUL in upstream text becomes U+FFFD",
    envelope: { content: [{ type: "text", text: "bad\u0000byte" }], isError: true },
    expect: { agent_message: "bad\uFFFDbyte" },
  },
];

describe("wrapper dialects and fallbacks", () => {
  it.each(cases)("$name", (c) => {
    check(c);
  });
});
