import { describe, it } from "vitest";
import { check, type Case } from "./helpers";

// source article 004 (docs/outcome-model.md) ("An AI agent can be approved and still leave you with an unknown result").
const cases: Case[] = [
  {
    name: "the article's post_dispatch_evidence_failed: never retryable, reconcile",
    envelope: {
      status: "post_dispatch_evidence_failed",
      retryable: false,
      reconciliation_required: true,
      invocation_id: "inv-7f3...",
    },
    expect: {
      dialect: "seed004",
      commit_state: "unknown",
      outcome: "unknown",
      dispatch_stage: "evidence_failed",
      next_action: "verify_operation",
      retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
    },
  },
  {
    name: "even if it claims to be retryable",
    envelope: { status: "post_dispatch_evidence_failed", retryable: true },
    expect: {
      commit_state: "unknown",
      dispatch_stage: "evidence_failed",
      retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
    },
  },
  {
    name: "pre-dispatch rejection: the operation did not leave the runtime",
    envelope: { status: "pre_dispatch_rejected", retryable: false },
    expect: { commit_state: "not_committed", dispatch_stage: "pre_dispatch" },
  },
  {
    name: "dispatch not established on a write",
    envelope: { status: "dispatch_not_established" },
    expect: { commit_state: "unknown", dispatch_stage: "dispatch_unconfirmed" },
  },
  {
    name: "confirmed business failure",
    envelope: { status: "business_failure", retryable: false },
    expect: { commit_state: "not_committed", dispatch_stage: "dispatched", next_action: "escalate" },
  },
];

describe("source article 004 (docs/outcome-model.md) adapter", () => {
  it.each(cases)("$name", (c) => {
    check(c);
  });
});
