import type { CommitState, NextAction, Outcome, Phase, ProbeResult } from "./vocabulary";
import { effectiveStatus, type InvocationStatus, type StoredStatus } from "./status";
import { isoOfMs } from "./time";

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

/** A settled attempt: the commit state evidence gave it, and who gave it. */
export type Settlement = NonNullable<LifecycleState["settled"]>;
export type DefiniteCommitState = "committed" | "not_committed";

/** A commit state that settles whether the effect happened. */
export const definite = (c: CommitState | null | undefined): c is DefiniteCommitState =>
  c === "committed" || c === "not_committed";
const addSeconds = (iso: string, s: number) => isoOfMs(Date.parse(iso) + s * 1000);

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

/** What a probe found, as a commit state. */
export function probeCommitState(result: ProbeResult): CommitState {
  return result === "found" ? "committed" : result === "absent" ? "not_committed" : "unknown";
}

/** What a probe's commit state makes the invocation: settled, partly applied, or (the probe failed) a person's call. */
export function statusForProbe(commitState: CommitState): StoredStatus {
  return definite(commitState) ? "reconciled" : commitState === "partial" ? "partially_applied" : "escalated";
}

/** An outcome that settles its attempt: a definite commit state, except "not committed" that is only queued (`pending`). */
export const settlesAttempt = (commitState: CommitState, status: StoredStatus): commitState is DefiniteCommitState =>
  definite(commitState) && status !== "pending";

// A new transport attempt may start from these without hiding anything unresolved.
const reopenedByIntent = new Set<InvocationStatus>(["pending", "retry_scheduled", "needs_input", "approved", "failed"]);

/** Whether a new attempt's intent reopens an invocation in this status (`reconciledAs`: the commit state it was reconciled as). */
export function reopensOnIntent(status: InvocationStatus, reconciledAs: CommitState | null | undefined): boolean {
  return reopenedByIntent.has(status) || (status === "reconciled" && reconciledAs === "not_committed");
}

/**
 * Whether a settlement outlives a new attempt's intent. Only a tool's own "not
 * committed" is superseded by a new attempt; a settlement by evidence stays,
 * so a late contradiction is still caught.
 */
export function keptByNewAttempt(settled: { commitState: CommitState | null; by: Settlement["by"] }): boolean {
  return settled.commitState === "committed" || settled.by !== "outcome";
}

/**
 * A committed effect later reported absent, or an effect found after evidence
 * (a probe, an operator) said it had not happened. A tool's own "not
 * committed" followed by a committed outcome is a retry, not a contradiction.
 */
export function contradicts(
  settled: Pick<Settlement, "commitState" | "by">,
  e: Pick<Evidence, "commitState" | "phase">,
): boolean {
  if (!definite(e.commitState) || e.commitState === settled.commitState) return false;
  if (settled.commitState === "committed") return true;
  return e.phase === "probe" || settled.by !== "outcome";
}

/**
 * Evidence about an attempt already settled that is read anyway: a tool's own
 * "not committed" followed by another outcome for the same attempt number is a
 * retry the runtime did not number.
 */
export const unnumberedRetry = (settled: { commitState: CommitState | null }, phase: Phase): boolean =>
  settled.commitState === "not_committed" && phase === "outcome";

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
    const reopen = fresh || reopensOnIntent(state.status, state.resolution?.commit_state);
    if (!reopen || e.attempt < state.lastAttempt) return s;
    const keep = state.settled && keptByNewAttempt(state.settled) ? state.settled : null;
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
    if (!unnumberedRetry(state.settled, e.phase)) return s;
  }

  if (e.phase === "probe") {
    const status = statusForProbe(e.commitState);
    if (definite(e.commitState)) {
      return move(s, e.at, {
        status,
        commitState: e.commitState,
        nextAction: e.commitState === "committed" ? "none" : "wait_and_retry",
        resolution: { commit_state: e.commitState, by: "probe", actor: null, at: e.at, note: null },
        settled: { attempt: lastAttempt, commitState: e.commitState, by: "probe" },
      });
    }
    if (status === "partially_applied") {
      return move(s, e.at, { status, commitState: "partial", nextAction: "verify_operation" });
    }
    // The probe itself failed: the outcome stays unknown and a person decides.
    return move(s, e.at, { status, commitState: "unknown", nextAction: "escalate" });
  }

  // An older or vaguer report does not undo a step an operator already took.
  const operatorHeld = state.status === "verifying" || state.status === "escalated";
  if (operatorHeld && !definite(e.commitState) && e.attempt <= state.lastAttempt) return s;
  if (e.attempt < state.lastAttempt && !definite(e.commitState)) return s;

  const status = statusForOutcome(e);
  const final = settlesAttempt(e.commitState, status);
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
  return applyEvidence(state, { ...e, phase: "probe", commitState: probeCommitState(e.probeResult) }, config);
}

export { effectiveStatus, type InvocationStatus };
