import type { CommitState, Phase } from "../outcome/vocabulary";
import { unsettledStoredStatuses, type InvocationStatus } from "../outcome/status";
import { attemptNumbers as foldAttemptNumbers, phaseRank } from "../outcome/fold";
import {
  contradicts,
  definite,
  keptByNewAttempt,
  probeCommitState,
  reopensOnIntent,
  settlesAttempt,
  statusForOutcome,
  statusForProbe,
  unnumberedRetry,
  type DefiniteCommitState,
  type Settlement,
} from "../outcome/lifecycle";
import type { InvocationView } from "./read";

// The story of a task or an invocation on one time axis: a lane per
// invocation, its records (intent, outcome, probe) in the order they happened,
// the gaps between them (waiting for an outcome, the stall window, the pause
// before a retry), operator actions at their time, and markers Settle derives
// (became stalled, evidence contradicted a settlement). Pure over the read
// model of docs/outcome-model.md §8, so the console can rebuild it from every live refresh.
//
// Browser-safe: imports nothing with I/O (the database readers are in
// read.ts), and every status rule comes from lib/outcome, which the write
// path folds with, so the markers say what the stored state says.

/** An intent's stall window is its `budget_left_s`, else Settle's default (SETTLE_STALL_WINDOW_S). */
export type TimelineAttempt = InvocationView["attempts"][number];
export type ActionEntry = InvocationView["actions"][number];
// The timeline draws records and actions; what a policy means now (sla, approvals) is not on it.
export type TimelineInvocation = Omit<
  InvocationView,
  | "attempts"
  | "attempts_total"
  | "attempts_earlier"
  | "sla"
  | "approvals"
  | "duplicate_refusals"
  | "guard_refusals"
  | "runbook"
  | "arguments_edit"
> & { attempts: TimelineAttempt[] };
export type TimelineOptions = { now: Date; stallWindowS: number };

type Base = { key: string; at: string; lane: number; invocation_id: string };

export type RecordEvent = Base & {
  kind: "record";
  phase: Phase;
  /** The attempt the record speaks for: unnumbered transport records are attempt 1, an unnumbered probe checks the latest attempt before it. */
  attempt: number;
  /** Position in the invocation's `attempts`, to link the event to its details. */
  index: number;
  record: TimelineAttempt;
  /** Set on the first record of a later attempt: the attempt it retries. */
  retry_of: number | null;
  /** An intent no outcome or probe ever answered. */
  unanswered: boolean;
};

export type GapEvent = Base & {
  kind: "gap";
  /**
   * awaiting_outcome: intent → its outcome; no_outcome: an intent nothing
   * answered; before_retry: the pause before the next attempt; unsettled: the
   * outcome unknown (or partial, escalated, being verified) until settled.
   */
  gap: "awaiting_outcome" | "no_outcome" | "before_retry" | "unsettled";
  attempt: number;
  until: string;
  ms: number;
  /** Still running at `now`. */
  open: boolean;
  /** When the stall window of the intent ends or ended (gaps after an intent only). */
  stall_at: string | null;
};

export type ActionEvent = Base & { kind: "action"; index: number; entry: ActionEntry; changed: boolean };

export type MarkerEvent = Base &
  (
    | { kind: "marker"; marker: "stalled"; attempt: number; intent_at: string; window_s: number }
    | {
        kind: "marker";
        marker: "conflict";
        attempt: number | null;
        /** What the settlement said and who made it; null when the read model does not say. */
        settled: { commit_state: "committed" | "not_committed"; by: "outcome" | "probe" | "operator" } | null;
        evidence: CommitState | null;
      }
  );

export type TimelineEvent = RecordEvent | GapEvent | ActionEvent | MarkerEvent;

export type Lane = {
  index: number;
  invocation: Omit<TimelineInvocation, "attempts" | "actions">;
  start: string;
  end: string;
  events: TimelineEvent[];
};

export type Timeline = { start: string; end: string; now: string; lanes: Lane[]; events: TimelineEvent[] };

const ms = (iso: string) => Date.parse(iso);
const isoOf = (t: number) => new Date(t).toISOString();
const kindRank = (e: TimelineEvent) =>
  e.kind === "record" ? phaseRank[e.phase] : e.kind === "marker" ? 3 : e.kind === "action" ? 4 : 5;

// Every time here is a UTC ISO string of one width (the read API's
// toISOString), so text order is time order, and cheaper on long timelines.
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function compareEvents(a: TimelineEvent, b: TimelineEvent): number {
  return byText(a.at, b.at) || a.lane - b.lane || kindRank(a) - kindRank(b) || byText(a.key, b.key);
}

/** Lifecycle's settlement; `commitState` null when an operator reconciled it and the read model does not say how. */
type Settled = { commitState: DefiniteCommitState | null; by: Settlement["by"]; attempt: number };

// Waiting for evidence or a person; the statuses the timeline folds are stored ones (`stalled` has its own window).
const unsettledStored = new Set<InvocationStatus>(unsettledStoredStatuses);

/** Which attempt each record speaks for: the fold's numbering. */
const attemptNumbers = (attempts: TimelineAttempt[]): number[] =>
  foldAttemptNumbers(attempts.map((a) => ({ attemptNo: a.attempt, phase: a.phase, at: a.at })));

/** A settlement the new evidence disagrees with; one whose commit state the read model does not say is never contradicted. */
const contradicted = (settled: Settled, commitState: CommitState, phase: Phase): boolean =>
  settled.commitState !== null &&
  contradicts({ commitState: settled.commitState, by: settled.by }, { commitState, phase });

type OpenIntent = { event: RecordEvent; opened: boolean; windowEnd: number | null };

function laneEvents(inv: TimelineInvocation, lane: number, opts: TimelineOptions): TimelineEvent[] {
  const now = opts.now.getTime();
  const base = (key: string, at: string) => ({ key: `${lane}:${key}`, at, lane, invocation_id: inv.invocation_id });
  const numbers = attemptNumbers(inv.attempts);
  const firstAttempt = Math.min(...numbers.filter((_, i) => inv.attempts[i]!.phase !== "probe"), Infinity);
  const records: RecordEvent[] = inv.attempts
    .map((record, index): RecordEvent => ({
      key: `${lane}:r${index}`,
      at: record.at,
      lane,
      invocation_id: inv.invocation_id,
      kind: "record",
      phase: record.phase,
      attempt: numbers[index]!,
      index,
      record,
      retry_of: null,
      unanswered: false,
    }))
    .sort(compareEvents);
  const lastIntentAttempt = Math.max(...records.filter((r) => r.phase === "intent").map((r) => r.attempt), -Infinity);
  const steps: Array<RecordEvent | ActionEvent> = [
    ...records,
    ...inv.actions.map((entry, index) => ({
      ...base(`a${index}`, entry.at),
      kind: "action" as const,
      index,
      entry,
      changed: entry.from_status !== entry.to_status,
    })),
  ].sort(compareEvents);

  const out: TimelineEvent[] = [];
  const open = new Map<number, OpenIntent>();
  const seenAttempts = new Set<number>();
  let status: InvocationStatus | null = null;
  let settled: Settled | null = null;
  let lastAttempt = 0;
  let lastAt: number | null = null;

  const closeIntent = (intent: OpenIntent, until: number, gap: GapEvent["gap"], isOpen: boolean) => {
    const r = intent.event;
    r.unanswered = gap === "no_outcome";
    const windowEnd = intent.opened ? intent.windowEnd : null;
    const start = ms(r.at);
    out.push({
      key: `${lane}:g${r.index}`,
      at: r.at,
      lane,
      invocation_id: inv.invocation_id,
      kind: "gap",
      gap,
      attempt: r.attempt,
      until: isoOf(until),
      ms: until - start,
      open: isOpen,
      stall_at: windowEnd === null ? null : isoOf(windowEnd),
    });
    if (windowEnd !== null && windowEnd <= until) {
      const window_s = Math.round((windowEnd - start) / 1000);
      out.push({
        ...base(`s${r.index}`, isoOf(windowEnd)),
        kind: "marker",
        marker: "stalled",
        attempt: r.attempt,
        intent_at: r.at,
        window_s,
      });
    }
    open.delete(r.attempt);
  };

  const evidence = (step: RecordEvent, commit: CommitState, phase: Phase): void => {
    if (settled && step.attempt <= settled.attempt) {
      if (contradicted(settled, commit, phase)) {
        out.push({
          ...base(`c${step.index}`, step.at),
          kind: "marker",
          marker: "conflict",
          attempt: step.attempt,
          settled: settled.commitState ? { commit_state: settled.commitState, by: settled.by } : null,
          evidence: commit,
        });
        settled = null;
        status = "outcome_unknown";
        return;
      }
      if (!unnumberedRetry(settled, phase)) return;
    }
    if (phase === "probe") {
      status = statusForProbe(commit);
      if (definite(commit)) settled = { commitState: commit, by: "probe", attempt: lastAttempt };
      return;
    }
    const next = statusForOutcome({
      commitState: commit,
      outcome: step.record.outcome,
      nextAction: step.record.next_action,
    });
    status = next;
    if (settlesAttempt(commit, next)) settled = { commitState: commit, by: "outcome", attempt: step.attempt };
  };

  const applyStep = (step: RecordEvent | ActionEvent): void => {
    if (step.kind === "action") {
      if (step.changed && (step.entry.from_status === "pending" || step.entry.from_status === "stalled")) {
        for (const intent of [...open.values()]) closeIntent(intent, ms(step.at), "no_outcome", false);
      }
      status = step.entry.to_status;
      if (step.entry.to_status === "reconciled" && step.changed) {
        const r = inv.resolution;
        const own = r && r.by === "operator" && ms(r.at) === ms(step.at) ? r.commit_state : null;
        settled = { commitState: own, by: "operator", attempt: lastAttempt };
      }
      return;
    }

    if (step.phase !== "probe") {
      if (!seenAttempts.has(step.attempt) && step.attempt > firstAttempt) {
        step.retry_of = Math.max(...[...seenAttempts].filter((n) => n < step.attempt), firstAttempt);
        if (lastAt !== null && lastAt < ms(step.at)) {
          out.push({
            ...base(`b${step.index}`, isoOf(lastAt)),
            kind: "gap",
            gap: "before_retry",
            attempt: step.attempt,
            until: step.at,
            ms: ms(step.at) - lastAt,
            open: false,
            stall_at: null,
          });
        }
      }
      seenAttempts.add(step.attempt);
    }
    lastAt = Math.max(lastAt ?? -Infinity, ms(step.at));

    if (step.phase === "intent") {
      const opens = (status === null || reopensOnIntent(status, settled?.commitState)) && step.attempt >= lastAttempt;
      lastAttempt = Math.max(lastAttempt, step.attempt);
      const latestOpen =
        opens &&
        step.attempt === lastIntentAttempt &&
        (inv.status === "pending" || inv.status === "stalled") &&
        inv.stall_at;
      const budget = step.record.budget_left_s;
      const windowEnd = latestOpen ? ms(inv.stall_at!) : ms(step.at) + (budget ?? opts.stallWindowS) * 1000;
      open.set(step.attempt, { event: step, opened: opens, windowEnd });
      if (opens) {
        status = "pending";
        if (settled && !keptByNewAttempt(settled)) settled = null;
      }
      return;
    }

    lastAttempt = Math.max(lastAttempt, step.attempt);
    for (const intent of [...open.values()])
      if (intent.event.attempt <= step.attempt) closeIntent(intent, ms(step.at), "awaiting_outcome", false);
    evidence(step, step.record.commit_state, step.phase);
    const probe = step.record.probe_result;
    if (probe) evidence(step, probeCommitState(probe), "probe");
  };

  // How long the invocation waited for a person or a probe: from the record or
  // action that left it unsettled to the one that settled it.
  let unsettledSince: { at: string; attempt: number; key: string } | null = null;
  const closeUnsettled = (until: number, isOpen: boolean) => {
    if (!unsettledSince) return;
    const start = ms(unsettledSince.at);
    out.push({
      key: `${unsettledSince.key}:u`,
      at: unsettledSince.at,
      lane,
      invocation_id: inv.invocation_id,
      kind: "gap",
      gap: "unsettled",
      attempt: unsettledSince.attempt,
      until: isoOf(until),
      ms: until - start,
      open: isOpen,
      stall_at: null,
    });
    unsettledSince = null;
  };

  for (const step of steps) {
    out.push(step);
    applyStep(step);
    const waiting = status !== null && unsettledStored.has(status);
    if (waiting && !unsettledSince)
      unsettledSince = { at: step.at, attempt: step.kind === "record" ? step.attempt : lastAttempt, key: step.key };
    else if (!waiting && unsettledSince) closeUnsettled(ms(step.at), false);
  }
  if (unsettledSince && unsettledStored.has(inv.status)) closeUnsettled(Math.max(now, ms(unsettledSince.at)), true);

  for (const intent of open.values()) {
    const stillWaiting =
      intent.opened &&
      intent.event.attempt === lastIntentAttempt &&
      (inv.status === "pending" || inv.status === "stalled");
    if (stillWaiting) closeIntent(intent, Math.max(now, ms(intent.event.at)), "no_outcome", true);
    else intent.event.unanswered = true;
  }

  if (inv.conflict && !out.some((e) => e.kind === "marker" && e.marker === "conflict")) {
    // The read model does not say what every settlement was; place the flag at
    // the first definite evidence after the last settlement we can see.
    const settleAt = Math.max(
      ...out.filter((e) => e.kind === "action" && e.entry.to_status === "reconciled").map((e) => ms(e.at)),
      -Infinity,
    );
    const after =
      records.find((r) => ms(r.at) >= settleAt && definite(r.record.commit_state)) ?? records[records.length - 1];
    if (after)
      out.push({
        ...base(`c${after.index}`, after.at),
        kind: "marker",
        marker: "conflict",
        attempt: after.attempt,
        settled: null,
        evidence: after.record.commit_state,
      });
  }
  return out.sort(compareEvents);
}

function endOf(event: TimelineEvent): number {
  return event.kind === "gap" ? ms(event.until) : ms(event.at);
}

export function buildTimeline(invocations: TimelineInvocation[], opts: TimelineOptions): Timeline {
  const ordered = [...invocations].sort(
    (a, b) =>
      ms(a.first_seen_at) - ms(b.first_seen_at) ||
      a.invocation_id.localeCompare(b.invocation_id) ||
      a.runtime.localeCompare(b.runtime),
  );
  const lanes: Lane[] = ordered.map((inv, index) => {
    const events = laneEvents(inv, index, opts);
    const { attempts: _attempts, actions: _actions, ...invocation } = inv;
    const times = events.map((e) => ms(e.at));
    const start = times.length > 0 ? Math.min(...times) : ms(inv.first_seen_at);
    const end = Math.max(start, ...events.map(endOf));
    return { index, invocation, start: isoOf(start), end: isoOf(end), events };
  });
  const now = opts.now.toISOString();
  if (lanes.length === 0) return { start: now, end: now, now, lanes, events: [] };
  return {
    start: isoOf(Math.min(...lanes.map((l) => ms(l.start)))),
    end: isoOf(Math.max(...lanes.map((l) => ms(l.end)))),
    now,
    lanes,
    events: lanes.flatMap((l) => l.events).sort(compareEvents),
  };
}
