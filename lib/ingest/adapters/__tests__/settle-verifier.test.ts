import { describe, expect, it } from "vitest";
import { normalizeVerifierAnswer, type VerifierEnvelope } from "../settle-verifier";
import { normalizeEnvelope } from "../../normalize";

const answer = (found: boolean | null, extra: Partial<VerifierEnvelope> = {}): VerifierEnvelope => ({
  settle_verification: { id: "v1", try: 2, answered_by: "runtime:billing", via: "api" },
  found,
  evidence: "GET /refunds?idempotency_key=k1 → 1 result",
  ref: "re_123",
  ...extra,
});

describe("a verifier's answer, read as a probe", () => {
  it.each([
    ["found", true, { outcome: "ok", commit_state: "committed", next_action: "none" }],
    ["absent", false, { outcome: "permanent", commit_state: "not_committed", next_action: "wait_and_retry" }],
    ["failed", null, { outcome: "unknown", commit_state: "unknown", next_action: "escalate" }],
  ] as const)("%s", (probe, found, expected) => {
    const n = normalizeVerifierAnswer(answer(found), probe);
    expect(n).toMatchObject({ dialect: "settle-verifier", ...expected });
    expect(n.safe_details).toEqual({
      verification_id: "v1",
      try: 2,
      answered_by: "runtime:billing",
      via: "api",
      found,
      ref: "re_123",
    });
    expect(n.agent_message).toBe("GET /refunds?idempotency_key=k1 → 1 result");
  });

  it("is never what ingest reads an envelope of that shape as: a runtime cannot pass for Settle's verifier", () => {
    expect(normalizeEnvelope(answer(true), { isWrite: true, at: "2026-12-03T10:00:00.000Z" }).dialect).not.toBe(
      "settle-verifier",
    );
  });
});
