import { describe, expect, it } from "vitest";
import { decideGuard, standingOf, type GuardCandidate, type Standing } from "./guard-rules";
import type { StoredStatus } from "./status";

const now = new Date("2026-12-01T12:00:00Z");
const later = "2026-12-01T12:05:00Z";
const earlier = "2026-12-01T11:55:00Z";

const candidate = (status: StoredStatus, extra: Partial<GuardCandidate> = {}): GuardCandidate => ({
  invocationId: `inv-${status}`,
  taskId: "task-1",
  idempotencyKey: "key-1",
  status,
  commitState: "unknown",
  stallAt: null,
  notBefore: null,
  resolution: null,
  lastAttempt: 1,
  lastAttemptAt: earlier,
  ...extra,
});
const resolved = (commit: "committed" | "not_committed") => ({
  commit_state: commit,
  by: "probe" as const,
  actor: null,
  at: earlier,
  note: null,
});

describe("the guard's table: what an invocation with the same key means for a new write", () => {
  it.each<[string, GuardCandidate, Standing]>([
    ["succeeded", candidate("succeeded", { commitState: "committed" }), "committed"],
    [
      "reconciled as committed",
      candidate("reconciled", { commitState: "committed", resolution: resolved("committed") }),
      "committed",
    ],
    ["any status whose commit state is committed", candidate("escalated", { commitState: "committed" }), "committed"],
    ["outcome_unknown", candidate("outcome_unknown"), "unknown"],
    ["stalled (pending past its stall window)", candidate("pending", { stallAt: earlier }), "unknown"],
    ["partially_applied", candidate("partially_applied", { commitState: "partial" }), "unknown"],
    ["verifying", candidate("verifying"), "unknown"],
    ["escalated with the outcome unknown", candidate("escalated"), "unknown"],
    [
      "escalated by the tool's own 'not committed, escalate'",
      candidate("escalated", { commitState: "not_committed" }),
      "in_flight",
    ],
    ["pending inside its stall window", candidate("pending", { stallAt: later }), "in_flight"],
    ["awaiting_approval", candidate("awaiting_approval", { commitState: "not_committed" }), "in_flight"],
    [
      "retry_scheduled before not_before",
      candidate("retry_scheduled", { commitState: "not_committed", notBefore: later }),
      "in_flight",
    ],
    [
      "retry_scheduled after not_before",
      candidate("retry_scheduled", { commitState: "not_committed", notBefore: earlier }),
      "reopenable",
    ],
    [
      "reconciled as not committed",
      candidate("reconciled", { commitState: "not_committed", resolution: resolved("not_committed") }),
      "reopenable",
    ],
    ["needs_input", candidate("needs_input", { commitState: "not_committed" }), "reopenable"],
    ["failed", candidate("failed", { commitState: "not_committed" }), "reopenable"],
    ["approved", candidate("approved", { commitState: "not_committed" }), "proceeding"],
    ["rejected", candidate("rejected", { commitState: "not_committed" }), "closed"],
  ])("%s → %s", (_, c, standing) => {
    expect(standingOf(c, now)).toBe(standing);
  });
});

describe("decideGuard", () => {
  const ask = (candidates: GuardCandidate[], invocationId: string | null = null, taskId = "task-1") =>
    decideGuard(candidates, { taskId, invocationId, idempotencyKey: "key-1" }, now);

  it("allows a key nobody used, naming no invocation (the caller makes one)", () => {
    expect(ask([])).toEqual({ kind: "allow", invocationId: null, reopens: null });
    expect(ask([], "inv-new")).toEqual({ kind: "allow", invocationId: "inv-new", reopens: null });
  });

  it("denies with the strongest reason: committed, then unknown, then in flight, naming the blocking invocation", () => {
    const inFlight = candidate("pending", { invocationId: "a", stallAt: later });
    const unknown = candidate("outcome_unknown", { invocationId: "b" });
    const committed = candidate("succeeded", { invocationId: "c", commitState: "committed" });
    expect(ask([inFlight, unknown, committed])).toEqual({
      kind: "deny",
      reason: "already_committed",
      invocationId: "c",
    });
    expect(ask([inFlight, unknown])).toEqual({ kind: "deny", reason: "outcome_unknown", invocationId: "b" });
    expect(ask([inFlight])).toEqual({ kind: "deny", reason: "in_flight", invocationId: "a" });
  });

  it("a committed invocation blocks a write with the same key in another task, and under another invocation id", () => {
    const committed = candidate("succeeded", { invocationId: "c", taskId: "task-9", commitState: "committed" });
    expect(ask([committed], "inv-new")).toMatchObject({ kind: "deny", reason: "already_committed", invocationId: "c" });
  });

  it("a settled-not-committed invocation of the same task takes the next attempt", () => {
    const settled = candidate("reconciled", {
      invocationId: "r",
      commitState: "not_committed",
      resolution: resolved("not_committed"),
      lastAttempt: 2,
    });
    expect(ask([settled])).toEqual({ kind: "allow", invocationId: "r", reopens: settled });
    expect(ask([settled], null, "task-2")).toEqual({ kind: "allow", invocationId: null, reopens: null });
  });

  it("an approved invocation proceeds itself; a write with its key under another invocation is in flight", () => {
    const approved = candidate("approved", { invocationId: "ap", commitState: "not_committed" });
    expect(ask([approved])).toEqual({ kind: "allow", invocationId: "ap", reopens: approved });
    expect(ask([approved], "ap")).toEqual({ kind: "allow", invocationId: "ap", reopens: approved });
    expect(ask([approved], "other")).toEqual({ kind: "deny", reason: "in_flight", invocationId: "ap" });
    expect(ask([approved], null, "task-2")).toEqual({ kind: "deny", reason: "in_flight", invocationId: "ap" });
  });

  it("a rejected invocation blocks nothing, but cannot be named for another try", () => {
    const rejected = candidate("rejected", { invocationId: "rj", commitState: "not_committed" });
    expect(ask([rejected])).toEqual({ kind: "allow", invocationId: null, reopens: null });
    expect(ask([rejected], "rj")).toMatchObject({ kind: "refuse", code: "TRANSITION_REFUSED" });
  });

  it("refuses to move an invocation to another idempotency key", () => {
    const other = candidate("failed", { invocationId: "x", idempotencyKey: "key-2", commitState: "not_committed" });
    expect(ask([other], "x")).toMatchObject({ kind: "refuse", code: "INVALID_REQUEST" });
    // Not named, an invocation with another key is nobody's business here.
    expect(ask([other])).toEqual({ kind: "allow", invocationId: null, reopens: null });
  });

  it("an invocation named without a key yet takes the key", () => {
    const keyless = candidate("needs_input", { invocationId: "k", idempotencyKey: null, commitState: "not_committed" });
    expect(ask([keyless], "k")).toEqual({ kind: "allow", invocationId: "k", reopens: keyless });
  });
});
