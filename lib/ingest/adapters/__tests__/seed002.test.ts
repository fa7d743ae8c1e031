import { describe, it } from "vitest";
import { check, type Case } from "./helpers";

// source article 002 (docs/outcome-model.md) ("The worst thing a tool can return…"): its outcome shape and six fixtures.
const cases: Case[] = [
  {
    name: "the article's 503: retryable, effect not applied, Retry-After honoured",
    envelope: {
      outcome: "retryable",
      effect_applied: "no",
      attempt_id: "ord-7741-a2",
      retry_after_s: 30,
      deadline_left_s: 42,
      message: "503 from /orders after 8.1s; no response body",
    },
    expect: {
      dialect: "seed002",
      outcome: "retryable",
      commit_state: "not_committed",
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: "2026-11-29T05:12:34.000Z", max_attempts_remaining: null },
      safe_details: { attempt_id: "ord-7741-a2", retry_after_s: 30, deadline_left_s: 42 },
    },
  },
  {
    name: "budget spent (deadline_left_s: 0): stop and report, not try once more",
    envelope: { outcome: "retryable", effect_applied: "no", deadline_left_s: 0, retry_after_s: 5 },
    expect: {
      commit_state: "not_committed",
      next_action: "escalate",
      retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
    },
  },
  {
    name: "fixture 1, kill mid-call: unknown",
    envelope: { outcome: "unknown", effect_applied: "unknown", message: "connection reset after send" },
    expect: { outcome: "unknown", commit_state: "unknown", next_action: "verify_operation" },
  },
  {
    name: "fixture 2, duplicate delivery: the receiver returns ok",
    envelope: { outcome: "ok", effect_applied: "yes" },
    expect: { outcome: "ok", commit_state: "committed", next_action: "none" },
  },
  {
    name: "fixture 3, 200 with an error body: permanent by body",
    envelope: { outcome: "permanent", effect_applied: "no", http_status: 200, message: "200 OK, body: card_declined" },
    expect: { outcome: "permanent", commit_state: "not_committed", next_action: "choose_alternative" },
  },
  {
    name: "fixture 5, partial batch: per-item outcomes kept",
    envelope: {
      outcome: "permanent",
      effect_applied: "partial",
      items: [
        { id: "row_12", applied: "yes" },
        { id: "row_13", applied: "no", reason: "merged cell" },
        { id: "row_14", applied: "unknown" },
      ],
      message: "38 of 40 rows written; 1 blocked, 1 unresolved",
    },
    expect: {
      commit_state: "partial",
      next_action: "verify_operation",
      items: [
        { item_id: "row_12", applied: "yes", reason: null },
        { item_id: "row_13", applied: "no", reason: "merged cell" },
        { item_id: "row_14", applied: "unknown", reason: null },
      ],
    },
  },
  {
    name: "mixed items without an effect flag are partial",
    envelope: {
      outcome: "permanent",
      items: [
        { id: "a", applied: "yes" },
        { id: "b", applied: "no" },
      ],
    },
    expect: { commit_state: "partial" },
  },
  {
    name: "a 200 that says queued has not applied anything yet",
    envelope: { outcome: "ok", effect_applied: "no", message: "queued" },
    expect: { outcome: "ok", commit_state: "not_committed" },
  },
  {
    name: "retryable without an effect flag on a write: unknown",
    envelope: { outcome: "retryable", effect_applied: null, message: "timeout" },
    expect: { commit_state: "unknown", next_action: "verify_operation" },
  },
];

describe("source article 002 (docs/outcome-model.md) adapter", () => {
  it.each(cases)("$name", (c) => {
    check(c);
  });
});
