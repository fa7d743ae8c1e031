import type { Phase } from "./vocabulary";
import type { ActionContext, ActionResult, OperatorAction } from "./actions";
import { foldAction, type ArgumentsEdit } from "./fold-action";
import {
  applyEvidence,
  applyProbeResult,
  initialState,
  type Evidence,
  type LifecycleConfig,
  type LifecycleState,
} from "./lifecycle";
import { isoOfMs } from "./time";

export { NO_ARGUMENTS, approvalTargetDigest, type ArgumentsEdit } from "./fold-action";

// An invocation's state is a fold over its records and operator actions.
// Records are ordered by what they say (attempt number, then `at`), never by
// arrival, so late, repeated or shuffled delivery folds to the same state.
// Operator actions are placed where they happened relative to arrivals
// (`seq`): an operator decided on the records that had arrived by then.
//
// A fold also says where it stopped (its cursor), so the write path can fold
// new records onto the stored state instead of reading the whole history
// again (`resumeFold`). When a new record belongs before what was folded, or
// could change which attempt a stored record speaks for, resuming refuses and
// the caller folds the whole history: the same function, so the same answer.

/** A stored record as the fold reads it: the lifecycle's evidence, before its attempt is numbered, plus what the invocation row keeps. */
export type FoldRecord = Omit<Evidence, "attempt"> & {
  eventKey: string;
  seq: number;
  attemptNo: number | null;
  tool: string;
  effectClass: string | null;
  idempotencyKey: string | null;
  /** The digest of the record's arguments (absent: none). */
  argsDigest?: string | null;
  /** What its tool's catalog entry made of its arguments (absent: none). */
  summary?: string | null;
  userMessage: string | null;
  code: string | null;
};

export type FoldAction = {
  seq: number;
  at: string;
  actor: string;
  action: OperatorAction;
  quorum?: number;
  /** An approval with edited arguments: their digest (lib/write/args-digest.ts, taken when it was given). */
  argumentsDigest?: string;
};

export type DerivedInvocation = LifecycleState & {
  tool: string;
  effectClass: string | null;
  idempotencyKey: string | null;
  /** The latest record's arguments digest, in fold order. */
  argsDigest: string | null;
  /** The latest record's summary, in fold order. */
  summary: string | null;
  /**
   * The arguments' digest a person approved (the call's latest when the last approval came), NO_ARGUMENTS when
   * the call had none then; null: none approved.
   */
  approvedDigest: string | null;
  /** A record after the approval reported other arguments than those approved. */
  argsMismatch: boolean;
  /** While awaiting approval: the edited arguments the approvals so far are for (null: the call's own). */
  pendingEdit: ArgumentsEdit | null;
  /** The edited arguments the last approval approved, until the call asks for approval again; null: approved as called. */
  approvedEdit: ArgumentsEdit | null;
  attemptCount: number;
  firstSeenAt: string;
  lastAttemptAt: string;
  userMessage: string | null;
  lastCode: string | null;
};

/** Where in the fold order a record stands: its attempt, then `at`, then phase, then event key. */
export type RecordKey = { attempt: number; at: string; phase: Phase; eventKey: string };

export type FoldCursor = {
  /** The last record folded after the last operator action; null when an action was the last step. */
  last: RecordKey | null;
  /** The highest attempt of a transport record (intent or outcome); null before the first. */
  maxTransport: number | null;
  /** Numbered transport records: the highest attempt number and the latest `at` among them. */
  numbered: { maxN: number; maxAt: string } | null;
  /** Unnumbered probes: the lowest attempt one speaks for, the latest `at`, and whether one had no numbered record before it. */
  probes: { minAttempt: number; maxAt: string; beforeAny: boolean } | null;
};

export type FoldSnapshot = DerivedInvocation & { cursor: FoldCursor };

/** The order of a record's phases within one attempt at one instant. */
export const phaseRank: Record<Phase, number> = { intent: 0, outcome: 1, probe: 2 };
const ms = (iso: string) => Date.parse(iso);

/** What attempt numbering reads of a record. */
export type AttemptRef = { attemptNo: number | null; phase: Phase; at: string };
const isNumberedTransport = (r: AttemptRef) => r.attemptNo !== null && r.phase !== "probe";

/**
 * Which attempt each record speaks for (in the order given): its own number;
 * unnumbered transport records are attempt 1; an unnumbered probe speaks for
 * the latest numbered attempt before it (else the highest, else 1).
 */
export function attemptNumbers(records: readonly AttemptRef[]): number[] {
  const numbered = records.filter(isNumberedTransport).map((r) => ({ n: r.attemptNo as number, at: ms(r.at) }));
  return records.map((r) => {
    if (r.attemptNo !== null) return r.attemptNo;
    if (r.phase !== "probe") return 1;
    const at = ms(r.at);
    const before = numbered.filter((x) => x.at <= at).map((x) => x.n);
    const pool = before.length > 0 ? before : numbered.map((x) => x.n);
    return pool.length > 0 ? Math.max(...pool) : 1;
  });
}

function effectiveAttempts(records: FoldRecord[]): Map<FoldRecord, number> {
  const numbers = attemptNumbers(records);
  return new Map(records.map((r, i) => [r, numbers[i]!]));
}

function compareKeys(a: RecordKey, b: RecordKey): number {
  return (
    a.attempt - b.attempt ||
    ms(a.at) - ms(b.at) ||
    phaseRank[a.phase] - phaseRank[b.phase] ||
    (a.eventKey < b.eventKey ? -1 : a.eventKey > b.eventKey ? 1 : 0)
  );
}

const keyOf = (r: FoldRecord, attempt: number): RecordKey => ({
  attempt,
  at: r.at,
  phase: r.phase,
  eventKey: r.eventKey,
});

type Step = { kind: "record"; record: FoldRecord; attempt: number } | { kind: "action"; action: FoldAction };

export function orderEvents(records: FoldRecord[], actions: FoldAction[]): Step[] {
  const attempt = effectiveAttempts(records);
  const sortedActions = [...actions].sort((a, b) => a.seq - b.seq);
  const segmentOf = (r: FoldRecord) => sortedActions.filter((a) => a.seq < r.seq).length;
  const segments: FoldRecord[][] = sortedActions.map(() => []).concat([[]]);
  for (const r of records) segments[segmentOf(r)]?.push(r);
  const steps: Step[] = [];
  segments.forEach((segment, i) => {
    for (const { record } of sortByKey(segment, attempt))
      steps.push({ kind: "record", record, attempt: attempt.get(record) ?? 1 });
    const action = sortedActions[i];
    if (action) steps.push({ kind: "action", action });
  });
  return steps;
}

/** Records in fold order (compareKeys), each key computed once. */
function sortByKey(
  records: FoldRecord[],
  attempt: Map<FoldRecord, number>,
): Array<{ record: FoldRecord; key: RecordKey }> {
  const keyed = records.map((record) => ({ record, key: keyOf(record, attempt.get(record) ?? 1), t: ms(record.at) }));
  keyed.sort(
    (a, b) =>
      a.key.attempt - b.key.attempt ||
      a.t - b.t ||
      phaseRank[a.key.phase] - phaseRank[b.key.phase] ||
      (a.key.eventKey < b.key.eventKey ? -1 : a.key.eventKey > b.key.eventKey ? 1 : 0),
  );
  return keyed;
}

/** One record folded onto a snapshot: the body shared by the whole fold and a resumed one. */
function foldRecord(d: FoldSnapshot, r: FoldRecord, attempt: number, config: LifecycleConfig): FoldSnapshot {
  // Written out: V8 makes an object slow when keys are added after a spread (1–2 µs a key here).
  const evidence = {
    phase: r.phase,
    attempt,
    at: r.at,
    outcome: r.outcome,
    commitState: r.commitState,
    nextAction: r.nextAction,
    notBefore: r.notBefore,
    budgetLeftS: r.budgetLeftS,
    probeResult: r.probeResult,
  };
  // A probe's stated result is its reading, applied once: read twice, a contradiction would re-open the
  // invocation and the second reading would then settle it, silently overwriting the settlement it contradicted.
  const probe = r.probeResult !== null && r.phase === "probe";
  let state: LifecycleState = probe ? applyProbeResult(d, evidence, config) : applyEvidence(d, evidence, config);
  if (r.probeResult && !probe) state = applyProbeResult(state, evidence, config);
  // The lifecycle returns a copy of what it was given (every field of the snapshot): completed here, not copied again.
  const next = (state === d ? { ...d } : state) as FoldSnapshot;
  next.effectClass = d.effectClass ?? r.effectClass;
  next.idempotencyKey = d.idempotencyKey ?? r.idempotencyKey;
  next.argsDigest = r.argsDigest ?? d.argsDigest;
  next.summary = r.summary ?? d.summary;
  // Bound to what was approved: a call reported with other arguments after it is flagged, never silently taken.
  next.argsMismatch =
    d.argsMismatch ||
    (d.approvedDigest !== null && r.phase !== "probe" && !!r.argsDigest && r.argsDigest !== d.approvedDigest);
  // Edits belong to one request for approval: a new request asks for a decision on the call as it now stands.
  if (next.status !== "awaiting_approval") next.pendingEdit = null;
  else if (d.status !== "awaiting_approval") next.approvedEdit = null;
  next.userMessage = r.userMessage ? r.userMessage : d.userMessage;
  next.lastCode = r.code ? r.code : d.lastCode;
  next.cursor = { ...d.cursor, last: keyOf(r, attempt) };
  return next;
}

function summaries(records: FoldRecord[], attempt: Map<FoldRecord, number>): Pick<FoldCursor, "numbered" | "probes"> {
  const numbered = records.filter(isNumberedTransport);
  const probes = records.filter((x) => x.attemptNo === null && x.phase === "probe");
  const latest = (rs: FoldRecord[]) => rs.reduce((a, r) => (ms(r.at) > ms(a) ? r.at : a), rs[0]!.at);
  return {
    numbered:
      numbered.length === 0
        ? null
        : { maxN: Math.max(...numbered.map((r) => r.attemptNo as number)), maxAt: latest(numbered) },
    probes:
      probes.length === 0
        ? null
        : {
            minAttempt: Math.min(...probes.map((r) => attempt.get(r) ?? 1)),
            maxAt: latest(probes),
            beforeAny: probes.some((p) => !numbered.some((x) => ms(x.at) <= ms(p.at))),
          },
  };
}

/** The whole fold, and where it stopped. */
export function foldInvocation(records: FoldRecord[], actions: FoldAction[], config: LifecycleConfig): FoldSnapshot {
  if (records.length === 0) throw new Error("an invocation has at least one record");
  const steps = orderEvents(records, actions);
  const times = records.map((r) => ms(r.at));
  const firstSeenAt = isoOfMs(Math.min(...times));
  const first = steps.find((s) => s.kind === "record")!;
  const initial = initialState(firstSeenAt);
  let d: FoldSnapshot = {
    status: initial.status,
    commitState: initial.commitState,
    nextAction: initial.nextAction,
    conflict: initial.conflict,
    resolution: initial.resolution,
    stallAt: initial.stallAt,
    notBefore: initial.notBefore,
    statusSince: initial.statusSince,
    settled: initial.settled,
    lastAttempt: initial.lastAttempt,
    approvals: initial.approvals,
    assignee: initial.assignee,
    tool: first.kind === "record" ? first.record.tool : records[0]!.tool,
    effectClass: null,
    idempotencyKey: null,
    argsDigest: null,
    summary: null,
    approvedDigest: null,
    argsMismatch: false,
    pendingEdit: null,
    approvedEdit: null,
    attemptCount: 0,
    firstSeenAt,
    lastAttemptAt: isoOfMs(Math.max(...times)),
    userMessage: null,
    lastCode: null,
    cursor: { last: null, maxTransport: null, numbered: null, probes: null },
  };
  const transport = new Set<number>();
  for (const step of steps) {
    if (step.kind === "action") {
      d = foldAction(d, step.action).snapshot;
      continue;
    }
    if (step.record.phase !== "probe") transport.add(step.attempt);
    d = foldRecord(d, step.record, step.attempt, config);
  }
  const attempt = new Map(steps.flatMap((s) => (s.kind === "record" ? [[s.record, s.attempt] as const] : [])));
  return {
    ...d,
    attemptCount: transport.size,
    cursor: {
      last: d.cursor.last,
      maxTransport: transport.size > 0 ? Math.max(...transport) : null,
      ...summaries(records, attempt),
    },
  };
}

export function deriveInvocation(
  records: FoldRecord[],
  actions: FoldAction[],
  config: LifecycleConfig,
): DerivedInvocation {
  const { cursor: _cursor, ...derived } = foldInvocation(records, actions, config);
  return derived;
}

/**
 * Folds `records` (new to this invocation, arrived after everything the
 * snapshot holds) onto the snapshot. Null when that would not give what the
 * whole fold gives: a record belongs before what was folded, is older than the
 * first record, or could change which attempt a stored record speaks for.
 */
export function resumeFold(
  snapshot: FoldSnapshot,
  records: FoldRecord[],
  config: LifecycleConfig,
): FoldSnapshot | null {
  if (records.length === 0) return snapshot;
  const c = snapshot.cursor;
  if (records.some((r) => ms(r.at) < ms(snapshot.firstSeenAt))) return null;
  const newNumbered = records.filter(isNumberedTransport);
  // A stored unnumbered probe speaks for the latest numbered attempt before it: a higher one arriving
  // before it may change that. One that had none before it spoke for a default (the highest of all,
  // or 1), which any numbered record may change, up or down.
  const probes = c.probes;
  if (
    probes &&
    newNumbered.some(
      (r) => probes.beforeAny || ((r.attemptNo as number) > probes.minAttempt && ms(r.at) <= ms(probes.maxAt)),
    )
  ) {
    return null;
  }
  const attempt = new Map<FoldRecord, number>();
  for (const r of records) {
    if (r.attemptNo !== null) attempt.set(r, r.attemptNo);
    else if (r.phase !== "probe") attempt.set(r, 1);
    else {
      // Only decidable here when every stored numbered record is before it.
      if (c.numbered && ms(r.at) < ms(c.numbered.maxAt)) return null;
      const before = newNumbered.filter((x) => ms(x.at) <= ms(r.at)).map((x) => x.attemptNo as number);
      if (c.numbered) before.push(c.numbered.maxN);
      const pool = before.length > 0 ? before : newNumbered.map((x) => x.attemptNo as number);
      attempt.set(r, pool.length > 0 ? Math.max(...pool) : 1);
    }
  }
  const sorted = sortByKey(records, attempt).map((k) => k.record);
  if (c.last && compareKeys(keyOf(sorted[0]!, attempt.get(sorted[0]!)!), c.last) <= 0) return null;

  let d = snapshot;
  let {
    attemptCount,
    cursor: { maxTransport },
  } = snapshot;
  for (const r of sorted) {
    const n = attempt.get(r)!;
    if (r.phase !== "probe") {
      if (maxTransport === null || n > maxTransport) {
        attemptCount += 1;
        maxTransport = n;
      } else if (n < maxTransport) {
        return null; // an attempt number below the highest: whether it is a new one only the history knows
      }
    }
    d = foldRecord(d, r, n, config);
  }
  const added = summaries(records, attempt);
  const merge = <T extends { maxAt: string }>(a: T | null, b: T | null, join: (x: T, y: T) => T): T | null =>
    a && b ? join(a, b) : (a ?? b);
  const later = (x: string, y: string) => (ms(x) >= ms(y) ? x : y);
  return {
    ...d,
    attemptCount,
    lastAttemptAt: isoOfMs(Math.max(ms(snapshot.lastAttemptAt), ...records.map((r) => ms(r.at)))),
    cursor: {
      last: d.cursor.last,
      maxTransport,
      numbered: merge(c.numbered, added.numbered, (x, y) => ({
        maxN: Math.max(x.maxN, y.maxN),
        maxAt: later(x.maxAt, y.maxAt),
      })),
      probes: merge(c.probes, added.probes, (x, y) => ({
        minAttempt: Math.min(x.minAttempt, y.minAttempt),
        maxAt: later(x.maxAt, y.maxAt),
        beforeAny: x.beforeAny || y.beforeAny,
      })),
    },
  };
}

/** An operator action folded onto the stored state: it comes after every record that has arrived (its seq is the newest). */
export function resumeWithAction(
  snapshot: FoldSnapshot,
  action: OperatorAction,
  ctx: ActionContext & { argumentsDigest?: string },
): { snapshot: FoldSnapshot; result: ActionResult } {
  return foldAction(snapshot, {
    seq: Number.MAX_SAFE_INTEGER,
    at: ctx.at,
    actor: ctx.actor,
    action,
    quorum: ctx.quorum,
    argumentsDigest: ctx.argumentsDigest,
  });
}
