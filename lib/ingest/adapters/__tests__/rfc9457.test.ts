import { describe, it } from "vitest";
import { check, type Case } from "./helpers";

// RFC 9457 problem details (RFC's own examples) and Cloudflare's agent extensions (cited by source article 001 (docs/outcome-model.md)).
const cases: Case[] = [
  {
    name: "RFC 9457 §3 out-of-credit (403): not committed, escalate",
    envelope: {
      type: "https://example.com/probs/out-of-credit",
      title: "You do not have enough credit.",
      detail: "Your current balance is 30, but that costs 50.",
      instance: "/account/12345/msgs/abc",
      balance: 30,
      accounts: ["/account/12345", "/account/67890"],
      status: 403,
    },
    expect: {
      dialect: "rfc9457",
      commit_state: "not_committed",
      next_action: "escalate",
      code: "out-of-credit",
      category: "authorization",
    },
  },
  {
    name: "RFC 9457 validation error with invalid-params pointers: correct the input",
    envelope: {
      type: "https://example.net/validation-error",
      title: "Your request is not valid.",
      status: 422,
      errors: [{ detail: "must be a positive integer", pointer: "#/age" }],
    },
    expect: { commit_state: "not_committed", next_action: "correct_input", category: "validation" },
  },
  {
    name: "Cloudflare 429 with retry_after: not_before = at + duration",
    envelope: {
      type: "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-1xxx-errors/error-1015/",
      title: "You are being rate limited",
      status: 429,
      detail: "Rate limited.",
      error_code: 1015,
      error_name: "rate_limited",
      error_category: "rate_limit",
      retryable: true,
      retry_after: 30,
      owner_action_required: false,
    },
    expect: {
      commit_state: "not_committed",
      next_action: "wait_and_retry",
      code: "1015",
      category: "rate_limit",
      retry: { directive: "after_delay", not_before: "2026-11-29T05:12:34.000Z", max_attempts_remaining: null },
    },
  },
  {
    name: "a 502 on a write: unknown, verify",
    envelope: { type: "about:blank", title: "Bad Gateway", status: 502, detail: "upstream closed the connection" },
    expect: { commit_state: "unknown", next_action: "verify_operation", code: "HTTP_502", category: "dependency" },
  },
  {
    name: "a 503 on a read: not committed, wait until retry_after",
    read: true,
    envelope: { title: "Service Unavailable", status: 503, retryable: true, retry_after: 10 },
    expect: {
      commit_state: "not_committed",
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: "2026-11-29T05:12:14.000Z", max_attempts_remaining: null },
    },
  },
  {
    name: "owner action required: escalate",
    envelope: { title: "Origin misconfigured", status: 400, error_code: 1016, owner_action_required: true },
    expect: { commit_state: "not_committed", next_action: "escalate" },
  },
  {
    name: "a problem document carried by a 200 is still an error",
    envelope: { type: "https://example.com/probs/declined", title: "Declined", status: 200, detail: "card declined" },
    expect: { commit_state: "unknown", next_action: "verify_operation" },
  },
];

describe("RFC 9457 adapter", () => {
  it.each(cases)("$name", (c) => {
    check(c);
  });
});
