import type { Resolution } from "./lifecycle";
import { effectiveStatus, isUnsettled, type StoredStatus } from "./status";

// What POST /api/v1/guard answers (docs/outcome-model.md §5, source article 004 (docs/outcome-model.md)), as a pure function of
// the invocations of one runtime that carry the idempotency key of the write
// about to happen. lib/guard/guard.ts reads them under a lock and records the
// answer; everything it decides is decided here.

/** `possible_duplicate`: another key, the same arguments (lib/outcome/duplicates.ts). */
export const guardReasons = ["already_committed", "outcome_unknown", "in_flight", "possible_duplicate"] as const;
export type GuardReason = (typeof guardReasons)[number];

/** An invocation of the calling runtime that carries the key, or that the call named. */
export type GuardCandidate = {
  invocationId: string;
  taskId: string;
  idempotencyKey: string | null;
  status: StoredStatus;
  commitState: string;
  stallAt: Date | string | null;
  notBefore: Date | string | null;
  resolution: Resolution | null;
  /** The highest attempt number recorded for it (unnumbered records count as 1). */
  lastAttempt: number;
  lastAttemptAt: Date | string;
};

/**
 * What an earlier invocation with the same key means for a new write with it:
 * - committed: the effect exists; another one would be a duplicate.
 * - unknown: nobody knows whether it exists; reconcile first (source article 004 (docs/outcome-model.md)).
 * - in_flight: in progress or waiting for someone; its own answer will come.
 * - proceeding: approved; that invocation itself may go ahead, no other.
 * - reopenable: settled as not done; a new attempt of that same invocation may start.
 * - closed: refused for good; it blocks nothing, but takes no new attempt.
 */
export type Standing = "committed" | "unknown" | "in_flight" | "proceeding" | "reopenable" | "closed";

/** The table, status by status. `now` matters for `stalled` and for `retry_scheduled`'s not_before. */
export function standingOf(c: GuardCandidate, now: Date): Standing {
  const status = effectiveStatus(c.status, c.stallAt, now);
  const committed =
    c.commitState === "committed" ||
    status === "succeeded" ||
    (status === "reconciled" && c.resolution?.commit_state === "committed");
  if (committed) return "committed";
  if (isUnsettled(status)) {
    // Escalated by the tool's own "not committed, escalate": nothing happened, a person is deciding.
    return status === "escalated" && c.commitState === "not_committed" ? "in_flight" : "unknown";
  }
  switch (status) {
    case "pending": // intent recorded, no outcome yet, inside its stall window
    case "awaiting_approval":
      return "in_flight";
    case "retry_scheduled":
      return c.notBefore !== null && new Date(c.notBefore).getTime() > now.getTime() ? "in_flight" : "reopenable";
    case "approved":
      return "proceeding";
    case "reconciled": // as not committed (committed is handled above)
    case "needs_input":
    case "failed":
      return "reopenable";
    case "rejected":
      return "closed";
    default:
      return "unknown";
  }
}

export type GuardRequest = { taskId: string; invocationId: string | null; idempotencyKey: string };

export type GuardVerdict =
  | { kind: "deny"; reason: GuardReason; invocationId: string }
  /** `reopens`: the existing invocation the intent is a new attempt of; null for a new invocation. */
  | { kind: "allow"; invocationId: string | null; reopens: GuardCandidate | null }
  | { kind: "refuse"; code: "INVALID_REQUEST" | "TRANSITION_REFUSED"; message: string };

const recentFirst = (a: GuardCandidate, b: GuardCandidate) =>
  new Date(b.lastAttemptAt).getTime() - new Date(a.lastAttemptAt).getTime();

/**
 * Denies when any invocation with the key is committed, then unknown, then in
 * flight (the strongest reason wins); otherwise allows, naming the invocation
 * that takes the intent: the one the call named, else an approved or
 * reopenable one of the same task, else none (a new invocation:
 * `invocationId` null, the caller names it).
 */
export function decideGuard(candidates: GuardCandidate[], request: GuardRequest, now: Date): GuardVerdict {
  const named =
    request.invocationId === null ? undefined : candidates.find((c) => c.invocationId === request.invocationId);
  if (named && named.idempotencyKey !== null && named.idempotencyKey !== request.idempotencyKey) {
    return {
      kind: "refuse",
      code: "INVALID_REQUEST",
      message: `Invocation ${named.invocationId} carries another idempotency key. A retry keeps its key (source article 004 (docs/outcome-model.md)); a new key is a new invocation.`,
    };
  }
  const keyed = candidates.filter((c) => c === named || c.idempotencyKey === request.idempotencyKey);
  const standings = keyed.map((c) => ({ c, s: standingOf(c, now) }));
  // Among invocations with the same standing, the one the call named speaks first, then the latest.
  const first = (wanted: (s: Standing, c: GuardCandidate) => boolean) =>
    standings
      .filter(({ c, s }) => wanted(s, c))
      .map(({ c }) => c)
      .sort((a, b) => (a === named ? -1 : b === named ? 1 : recentFirst(a, b)))[0];

  const committed = first((s) => s === "committed");
  if (committed) return { kind: "deny", reason: "already_committed", invocationId: committed.invocationId };
  const unknown = first((s) => s === "unknown");
  if (unknown) return { kind: "deny", reason: "outcome_unknown", invocationId: unknown.invocationId };

  const sameTask = (c: GuardCandidate) => c.taskId === request.taskId;
  const takes =
    request.invocationId !== null
      ? named
      : (first((s, c) => s === "proceeding" && sameTask(c)) ?? first((s, c) => s === "reopenable" && sameTask(c)));
  // An approved invocation may proceed itself; another invocation with its key would be a second write.
  const busy = first((s, c) => s === "in_flight" || (s === "proceeding" && c !== takes));
  if (busy) return { kind: "deny", reason: "in_flight", invocationId: busy.invocationId };
  if (takes && standingOf(takes, now) === "closed") {
    return {
      kind: "refuse",
      code: "TRANSITION_REFUSED",
      message: `Invocation ${takes.invocationId} was rejected: its decision is abandon. Another try is a new invocation (leave invocation_id out).`,
    };
  }
  if (takes) return { kind: "allow", invocationId: takes.invocationId, reopens: takes };
  return { kind: "allow", invocationId: request.invocationId, reopens: null };
}
