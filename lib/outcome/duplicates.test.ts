import { describe, expect, it } from "vitest";
import { duplicateOf, reviewedInQueue, type DuplicateCandidate } from "./duplicates";

// Which earlier invocation a write under a new key would duplicate (decision 028).

const now = new Date("2026-12-03T12:00:00.000Z");
const candidate = (invocationId: string, c: Partial<DuplicateCandidate>): DuplicateCandidate => ({
  invocationId,
  taskId: "t",
  idempotencyKey: `key-${invocationId}`,
  status: "succeeded",
  commitState: "committed",
  stallAt: null,
  notBefore: null,
  resolution: null,
  lastAttempt: 1,
  lastAttemptAt: "2026-12-03T11:00:00.000Z",
  ...c,
});

describe("duplicateOf", () => {
  const committed = candidate("committed", {});
  const unknown = candidate("unknown", {
    status: "outcome_unknown",
    commitState: "unknown",
    lastAttemptAt: "2026-12-03T11:30:00.000Z",
  });
  const inFlight = candidate("in-flight", {
    status: "pending",
    commitState: "unknown",
    stallAt: "2026-12-03T12:05:00.000Z",
    lastAttemptAt: "2026-12-03T11:59:00.000Z",
  });
  const failed = candidate("failed", { status: "failed", commitState: "not_committed" });
  const reconciledNot = candidate("reconciled-not", {
    status: "reconciled",
    commitState: "not_committed",
    resolution: { commit_state: "not_committed", by: "operator", actor: "a", at: "x", note: null },
  });

  it("at the guard: committed first, then unknown, then in flight; settled-not-committed and failed never", () => {
    expect(duplicateOf([inFlight, unknown, committed], now, "guard")?.invocationId).toBe("committed");
    expect(duplicateOf([inFlight, unknown], now, "guard")?.invocationId).toBe("unknown");
    expect(duplicateOf([inFlight, failed], now, "guard")?.invocationId).toBe("in-flight");
    expect(duplicateOf([failed, reconciledNot], now, "guard")).toBeNull();
  });

  it("after the fact only an effect that happened or may have counts: one in flight has its own outcome to come", () => {
    expect(duplicateOf([inFlight], now, "after_the_fact")).toBeNull();
    expect(duplicateOf([inFlight, unknown], now, "after_the_fact")?.invocationId).toBe("unknown");
  });

  it("a pending intent past its stall time is unknown, and among equals the latest speaks", () => {
    const stalled = candidate("stalled", {
      status: "pending",
      commitState: "unknown",
      stallAt: "2026-12-03T11:10:00.000Z",
    });
    expect(duplicateOf([stalled], now, "after_the_fact")?.invocationId).toBe("stalled");
    const later = candidate("later", { lastAttemptAt: "2026-12-03T11:45:00.000Z" });
    expect(duplicateOf([committed, later], now, "guard")?.invocationId).toBe("later");
  });

  it("money, destructive and send wait in the queue for review; create, read and unclassified do not", () => {
    expect(["money", "destructive", "send", "create", "read", null, "charge"].map(reviewedInQueue)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
