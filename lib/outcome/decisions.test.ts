import { describe, expect, it } from "vitest";
import { decideFor, type DecisionInput } from "./decisions";
import { invocationStatuses, type InvocationStatus } from "./status";

const now = new Date("2026-12-01T12:00:00Z");
const at = (status: InvocationStatus, extra: Partial<DecisionInput> = {}): DecisionInput => ({
  status,
  commitState: "unknown",
  notBefore: null,
  resolution: null,
  ...extra,
});

describe("decideFor (docs/outcome-model.md §5)", () => {
  it.each<[InvocationStatus, string]>([
    ["pending", "wait"],
    ["stalled", "wait"],
    ["outcome_unknown", "wait"],
    ["partially_applied", "wait"],
    ["escalated", "wait"],
    ["awaiting_approval", "wait"],
    ["verifying", "verify"],
    ["succeeded", "do_not_retry"],
    ["needs_input", "correct_input"],
    ["approved", "proceed"],
    ["rejected", "abandon"],
    ["failed", "abandon"],
  ])("%s → %s", (status, decision) => {
    expect(decideFor(at(status), now).decision).toBe(decision);
  });

  it("reconciled follows the settled commit state", () => {
    const by = { by: "operator" as const, actor: "ana", at: now.toISOString(), note: "ledger" };
    expect(
      decideFor(at("reconciled", { commitState: "committed", resolution: { commit_state: "committed", ...by } }), now)
        .decision,
    ).toBe("do_not_retry");
    expect(
      decideFor(
        at("reconciled", { commitState: "not_committed", resolution: { commit_state: "not_committed", ...by } }),
        now,
      ).decision,
    ).toBe("retry_allowed");
  });

  it("retry_scheduled waits until not_before, then allows the retry", () => {
    expect(decideFor(at("retry_scheduled", { notBefore: "2026-12-01T12:00:01Z" }), now).decision).toBe("wait");
    expect(decideFor(at("retry_scheduled", { notBefore: "2026-12-01T12:00:00Z" }), now).decision).toBe("retry_allowed");
  });

  it("never answers retry_allowed or proceed while the outcome is unknown", () => {
    for (const status of invocationStatuses) {
      const { decision } = decideFor(at(status), now);
      if (["pending", "stalled", "outcome_unknown", "partially_applied", "escalated", "verifying"].includes(status)) {
        expect(["wait", "verify"]).toContain(decision);
      }
    }
  });
});
