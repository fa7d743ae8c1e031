import { describe, it } from "vitest";
import { check, type Case } from "./helpers";

// Values a tool's upstream API can send that Settle cannot store or use: the
// hint is left out of the reading and named in `ignored`; the reading itself
// (commit state, next action) is what the envelope says without it. The
// first row is the issue's own example, which once failed whole batches.
const cases: Case[] = [
  {
    name: "RFC 9457 503 with retry_after 1e13 s: no not_before, the hint named",
    envelope: { title: "x", status: 503, retry_after: 1e13 },
    read: true,
    expect: {
      dialect: "rfc9457",
      commit_state: "not_committed",
      retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
      ignored: [
        { field: "retry_after", reason: "10000000000000 s after the record's time is beyond what Settle takes" },
      ],
    },
  },
  {
    name: "retry_after 1e308 on a 429",
    envelope: { type: "about:blank", title: "slow down", status: 429, retry_after: 1e308 },
    expect: {
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
      ignored: [{ field: "retry_after", reason: "1e+308 s after the record's time is beyond what Settle takes" }],
    },
  },
  {
    name: "retry_after 2^63 as a string",
    envelope: { type: "about:blank", title: "slow down", status: 429, retry_after: "9223372036854775808" },
    expect: {
      retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
      ignored: [
        {
          field: "retry_after",
          reason: "9223372036854776000 s after the record's time is beyond what Settle takes",
        },
      ],
    },
  },
  {
    name: "source article 002 (docs/outcome-model.md) retry_after_s that is no number: ignored, still retryable",
    envelope: { outcome: "retryable", effect_applied: "no", retry_after_s: "soon" },
    expect: {
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
      ignored: [{ field: "retry_after_s", reason: "not a number of seconds" }],
    },
  },
  {
    name: 'source article 002 (docs/outcome-model.md) effect_applied "toString" is no effect flag (not a key of Object.prototype)',
    envelope: { outcome: "retryable", effect_applied: "toString" },
    expect: { commit_state: "unknown", next_action: "verify_operation" },
  },
  {
    name: "Settle envelope: not_before in year 10000 and max_attempts_remaining 2^31",
    envelope: {
      ok: false,
      commit_state: "not_committed",
      retry: { directive: "after_delay", not_before: "9999-12-31T23:59:59-23:59", max_attempts_remaining: 2 ** 31 },
      next_action: "wait_and_retry",
    },
    expect: {
      retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
      ignored: [
        { field: "retry.not_before", reason: "not an ISO 8601 date-time from 1970-01-01 to 8999-12-31 (UTC)" },
        { field: "retry.max_attempts_remaining", reason: "not a whole number from 0 to 2147483647" },
      ],
    },
  },
  {
    name: "inside MCP text: the inner envelope's hint is ignored the same way",
    envelope: {
      content: [{ type: "text", text: JSON.stringify({ title: "x", status: 503, retry_after: 1e13 }) }],
      isError: true,
    },
    expect: {
      dialect: "rfc9457",
      wrapper_dialect: "mcp",
      commit_state: "unknown",
      ignored: [
        { field: "retry_after", reason: "10000000000000 s after the record's time is beyond what Settle takes" },
      ],
    },
  },
  {
    name: "inside an OpenAI function_call_output: source article 002 (docs/outcome-model.md)'s retry_after_s 1e13",
    envelope: {
      type: "function_call_output",
      call_id: "c1",
      output: JSON.stringify({ outcome: "retryable", effect_applied: "no", retry_after_s: 1e13 }),
    },
    expect: {
      dialect: "seed002",
      wrapper_dialect: "openai",
      retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
      ignored: [
        { field: "retry_after_s", reason: "10000000000000 s after the record's time is beyond what Settle takes" },
      ],
    },
  },
  {
    name: "a hint Settle can store is used, and nothing is ignored",
    envelope: { title: "x", status: 503, retry_after: 30 },
    read: true,
    expect: {
      retry: { directive: "after_delay", not_before: "2026-11-29T05:12:34.000Z", max_attempts_remaining: null },
      ignored: undefined,
    },
  },
];

describe("hints an envelope gives that Settle cannot use", () => {
  it.each(cases)("$name", (c) => {
    check(c);
  });
});
