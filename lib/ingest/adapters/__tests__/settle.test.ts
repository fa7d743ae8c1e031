import { describe, it } from "vitest";
import { outcomeUnknownExample } from "../../../outcome/example-envelopes";
import { check, type Case } from "./helpers";

// The examples of source article 000 (docs/outcome-model.md) ("Agent Tool Error Envelopes"), verbatim.
const cases: Case[] = [
  {
    name: "validation error: INVALID_RECIPIENT_ADDRESS",
    envelope: {
      ok: false,
      code: "INVALID_RECIPIENT_ADDRESS",
      category: "validation",
      commit_state: "not_committed",
      retry: { directive: "after_input_fix", max_attempts_remaining: 1 },
      next_action: "correct_input",
      operation_ref: "run_81/step_4",
      safe_details: { field: "recipient_email" },
      agent_message: "recipient_email is invalid; request a corrected address.",
      user_message: "I need a valid recipient address before I can send this.",
    },
    expect: {
      dialect: "settle",
      commit_state: "not_committed",
      outcome: "permanent",
      next_action: "correct_input",
      code: "INVALID_RECIPIENT_ADDRESS",
      category: "validation",
      retry: { directive: "after_input_fix", not_before: null, max_attempts_remaining: 1 },
      safe_details: { field: "recipient_email" },
      user_message: "I need a valid recipient address before I can send this.",
    },
  },
  {
    name: "OUTCOME_UNKNOWN after a write timeout",
    envelope: { ...outcomeUnknownExample, safe_details: { verification_tool: "get_invoice_by_operation_ref" } },
    expect: {
      dialect: "settle",
      commit_state: "unknown",
      outcome: "unknown",
      next_action: "verify_operation",
      category: "dependency",
      retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
    },
  },
  {
    name: "ToolSuccess",
    envelope: {
      ok: true,
      operation_ref: "run_81/step_4",
      commit_state: "committed",
      result: { invoice_id: "inv_1" },
      verification: { checked_at: "2026-11-29T05:12:05Z" },
    },
    expect: { dialect: "settle", commit_state: "committed", outcome: "ok", next_action: "none" },
  },
  {
    name: "read endpoint rate limit with an absolute not_before",
    read: true,
    envelope: {
      ok: false,
      code: "RATE_LIMITED",
      category: "rate_limit",
      commit_state: "not_committed",
      retry: { directive: "after_delay", not_before: "2026-11-29T05:13:00Z", max_attempts_remaining: 3 },
      next_action: "wait_and_retry",
    },
    expect: {
      commit_state: "not_committed",
      outcome: "retryable",
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: "2026-11-29T05:13:00.000Z", max_attempts_remaining: 3 },
    },
  },
  {
    name: "lost approval: MISSING_APPROVAL",
    envelope: {
      ok: false,
      code: "MISSING_APPROVAL",
      category: "authorization",
      commit_state: "not_committed",
      retry: { directive: "never", max_attempts_remaining: 0 },
      next_action: "request_approval",
    },
    expect: { commit_state: "not_committed", next_action: "request_approval", outcome: "permanent" },
  },
  {
    name: "a commit_state outside the vocabulary is no evidence",
    envelope: { ok: false, code: "X", commit_state: "maybe" },
    expect: { dialect: "settle", commit_state: "unknown", next_action: "verify_operation" },
  },
  {
    name: "secrets in safe_details are redacted",
    envelope: {
      ok: false,
      code: "UPSTREAM_ERROR",
      commit_state: "not_committed",
      retry: { directive: "never", max_attempts_remaining: 0 },
      next_action: "escalate",
      safe_details: { api_key: "sk-live-123", field: "x", authorization: "Bearer abc" },
    },
    expect: { safe_details: { api_key: "[redacted]", field: "x", authorization: "[redacted]" } },
  },
];

describe("settle / source article 000 (docs/outcome-model.md) adapter", () => {
  it.each(cases)("$name", (c) => {
    check(c);
  });
});
