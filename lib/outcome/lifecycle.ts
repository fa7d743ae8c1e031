import type { CommitState, NextAction, Outcome, Phase, ProbeResult } from "./vocabulary";
import { effectiveStatus, type InvocationStatus, type StoredStatus } from "./status";

// The one module that decides every status transition of an invocation:
// evidence from the runtime (intent, outcome, probe) and operator actions.
// Pure: callers pass time in; nothing here reads a clock or a database.

export type Resolution = {
  commit_state: "committed" | "not_committed";
  by: "probe" | "operator";
  actor: string | null;
  at: string;
  note: string | null;
};

export type LifecycleState = {
  status: StoredStatus;
  commitState: CommitState;
  nextAction: NextAction;
  conflict: boolean;
  resolution: Resolution | null;
  stallAt: string | null;
  notBefore: string | null;
  statusSince: string;
  /** Highest attempt whose effect a definite commit state speaks for, and that state. */
  settled: { attempt: number; commitState: "committed" | "not_committed"; by: "outcome" | "probe" | "operator" } | null;
  lastAttempt: number;
  approvals: string[];
  assignee: string | null;
};

export type Evidence = {
  phase: Phase;
  attempt: number;
  at: string;
  outcome: Outcome;
  commitState: CommitState;
  nextAction: NextAction;
  notBefore: string | null;
  budgetLeftS: number | null;
  probeResult: ProbeResult | null;
};

export type LifecycleConfig = { stallWindowS: number };

const definite = (c: CommitState): c is "committed" | "not_committed" => c === "committed" || c === "not_committed";
const addSeconds = (iso: string, s: number) => new Date(Date.parse(iso) + s * 1000).toISOString();

export function initialState(at: string): LifecycleState {
  return {
    status: "pending",
    commitState: "unknown",
    nextAction: "none",
    conflict: false,
    resolution: null,
    stallAt: null,
    notBefore: null,
    statusSince: at,
    settled: null,
    lastAttempt: 0,
    approvals: [],
    assignee: null,
  };
}

/**
 * The one way a state changes status: what belongs to a status goes with it.
 * Approvals belong to one stay in awaiting_approval: leaving it (approved,
 * rejected, escalated, anything) forgets them, so a return asks everyone
 * again (decision 014). Operator actions move through here too (actions.ts).
 */
export function move(state: LifecycleState, at: string, patch: Partial<LifecycleState>): LifecycleState {
  const next = { ...state, ...patch };
  if (next.status !== state.status) next.statusSince = at;
  if (next.status !== "pending") next.stallAt = null;
  if (next.status !== "retry_scheduled") next.notBefore = null;
  if (next.status !== "awaiting_approval") next.approvals = [];
  return next;
}

/** What an outcome says about the invocation, before history is considered. */
export function statusForOutcome(e: Pick<Evidence, "commitState" | "outcome" | "nextAction">): StoredStatus {
  if (e.commitState === "committed") return "succeeded";
  if (e.commitState === "partial") return "partially_applied";
  if (e.commitState === "unknown") return e.nextAction === "escalate" ? "escalated" : "outcome_unknown";
  // not committed: the request has to change, wait, be approved, or stop.
  if (e.outcome === "ok") return "pending"; // accepted but not applied yet ("queued")
  switch (e.nextAction) {
    case "correct_input":
      return "needs_input";
    case "request_approval":
      return "awaiting_approval";
    case "escalate":
      return "escalated";
    case "wait_and_retry":
      return "retry_scheduled";
    case "verify_operation":
      return "outcome_unknown";
    default:
      return e.outcome === "retryable" ? "retry_scheduled" : "failed";
  }
}

// A new transport attempt may start from these without hiding anything unresolved.
const reopenedByIntent = new Set<StoredStatus>(["pending", "retry_scheduled", "needs_input", "approved", "failed"]);

/**
 * A committed effect later reported absent, or an effect found after evidence
 * (a probe, an operator) said it had not happened. A tool's own "not
 * committed" followed by a committed outcome is a retry, not a contradiction.
 */
function contradicts(settled: NonNullable<LifecycleState["settled"]>, e: Evidence): boolean {
  if (!definite(e.commitState) || e.commitState === settled.commitState) return false;
  if (settled.commitState === "committed") return true;
  return e.phase === "probe" || settled.by !== "outcome";
}

function conflictReopen(state: LifecycleState, at: string): LifecycleState {
  return move(state, at, {
    status: "outcome_unknown",
    commitState: "unknown",
    nextAction: "verify_operation",
    conflict: true,
    settled: null,
  });
}

export function applyEvidence(state: LifecycleState, e: Evidence, config: LifecycleConfig): LifecycleState {
  const lastAttempt = Math.max(state.lastAttempt, e.attempt);
  const s = { ...state, lastAttempt };

  if (e.phase === "intent") {
    const fresh = state.lastAttempt === 0 && state.settled === null;
    const reopen = fresh || reopenedByIntent.has(state.status) || (state.status === "reconciled" && state.resolution?.commit_state === "not_committed");
    if (!reopen || e.attempt < state.lastAttempt) return s;
    // Only a tool's own "not committed" is superseded by a new attempt; a
    // settlement by evidence stays, so a late contradiction is still caught.
    const keep = state.settled && (state.settled.commitState === "committed" || state.settled.by !== "outcome") ? state.settled : null;
    return move(s, e.at, {
      settled: keep,
      status: "pending",
      commitState: "unknown",
      nextAction: "none",
      stallAt: addSeconds(e.at, e.budgetLeftS ?? config.stallWindowS),
    });
  }

  // Evidence about an attempt that is already settled either agrees, says less, or contradicts.
  if (state.settled && e.attempt <= state.settled.attempt) {
    if (contradicts(state.settled, e)) return conflictReopen(s, e.at);
    if (!(state.settled.commitState === "not_committed" && e.phase === "outcome")) return s;
    // A tool's own "not committed" followed by another outcome for the same
    // attempt number is a retry the runtime did not number: read it normally.
  }

  if (e.phase === "probe") {
    if (definite(e.commitState)) {
      return move(s, e.at, {
        status: "reconciled",
        commitState: e.commitState,
        nextAction: e.commitState === "committed" ? "none" : "wait_and_retry",
        resolution: { commit_state: e.commitState, by: "probe", actor: null, at: e.at, note: null },
        settled: { attempt: lastAttempt, commitState: e.commitState, by: "probe" },
      });
    }
    if (e.commitState === "partial") {
      return move(s, e.at, { status: "partially_applied", commitState: "partial", nextAction: "verify_operation" });
    }
    // The probe itself failed: the outcome stays unknown and a person decides.
    return move(s, e.at, { status: "escalated", commitState: "unknown", nextAction: "escalate" });
  }

  // An older or vaguer report does not undo a step an operator already took.
  const operatorHeld = state.status === "verifying" || state.status === "escalated";
  if (operatorHeld && !definite(e.commitState) && e.attempt <= state.lastAttempt) return s;
  if (e.attempt < state.lastAttempt && !definite(e.commitState)) return s;

  const status = statusForOutcome(e);
  const final = definite(e.commitState) && status !== "pending";
  return move(s, e.at, {
    status,
    commitState: status === "pending" ? "unknown" : e.commitState,
    nextAction: e.nextAction,
    notBefore: status === "retry_scheduled" ? e.notBefore : null,
    stallAt: status === "pending" ? addSeconds(e.at, e.budgetLeftS ?? config.stallWindowS) : null,
    settled: final
      ? { attempt: e.attempt, commitState: e.commitState as "committed" | "not_committed", by: "outcome" }
      : state.settled,
  });
}

export function applyProbeResult(state: LifecycleState, e: Evidence, config: LifecycleConfig): LifecycleState {
  if (!e.probeResult) return state;
  const commitState: CommitState =
    e.probeResult === "found" ? "committed" : e.probeResult === "absent" ? "not_committed" : "unknown";
  return applyEvidence(state, { ...e, phase: "probe", commitState }, config);
}

export { effectiveStatus, type InvocationStatus };
