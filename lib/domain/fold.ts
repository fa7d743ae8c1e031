import type { CommitState, NextAction, Outcome, Phase, ProbeResult } from "../ingest/vocabulary";
import { applyAction, type OperatorAction } from "./actions";
import { applyEvidence, applyProbeResult, initialState, type LifecycleConfig, type LifecycleState } from "./lifecycle";

// An invocation's state is a fold over its records and operator actions.
// Records are ordered by what they say (attempt number, then `at`), never by
// arrival, so late, repeated or shuffled delivery folds to the same state.
// Operator actions are placed where they happened relative to arrivals
// (`seq`): an operator decided on the records that had arrived by then.

export type FoldRecord = {
  eventKey: string;
  seq: number;
  attemptNo: number | null;
  phase: Phase;
  at: string;
  outcome: Outcome;
  commitState: CommitState;
  nextAction: NextAction;
  notBefore: string | null;
  budgetLeftS: number | null;
  probeResult: ProbeResult | null;
  tool: string;
  effectClass: string | null;
  idempotencyKey: string | null;
  userMessage: string | null;
  code: string | null;
};

export type FoldAction = { seq: number; at: string; actor: string; action: OperatorAction; quorum?: number };

export type DerivedInvocation = LifecycleState & {
  tool: string;
  effectClass: string | null;
  idempotencyKey: string | null;
  attemptCount: number;
  firstSeenAt: string;
  lastAttemptAt: string;
  userMessage: string | null;
  lastCode: string | null;
};

const phaseRank: Record<Phase, number> = { intent: 0, outcome: 1, probe: 2 };

/** Unnumbered records: transport attempts count as 1; a probe speaks for the latest attempt before it. */
function effectiveAttempts(records: FoldRecord[]): Map<FoldRecord, number> {
  const numbered = records
    .filter((r) => r.attemptNo !== null && r.phase !== "probe")
    .map((r) => ({ n: r.attemptNo as number, at: Date.parse(r.at) }));
  const result = new Map<FoldRecord, number>();
  for (const r of records) {
    if (r.attemptNo !== null) result.set(r, r.attemptNo);
    else if (r.phase !== "probe") result.set(r, 1);
    else {
      const at = Date.parse(r.at);
      const before = numbered.filter((x) => x.at <= at).map((x) => x.n);
      const pool = before.length > 0 ? before : numbered.map((x) => x.n);
      result.set(r, pool.length > 0 ? Math.max(...pool) : 1);
    }
  }
  return result;
}

function compareRecords(a: FoldRecord, b: FoldRecord, attempt: Map<FoldRecord, number>): number {
  return (
    (attempt.get(a) ?? 1) - (attempt.get(b) ?? 1) ||
    Date.parse(a.at) - Date.parse(b.at) ||
    phaseRank[a.phase] - phaseRank[b.phase] ||
    (a.eventKey < b.eventKey ? -1 : a.eventKey > b.eventKey ? 1 : 0)
  );
}

type Step = { kind: "record"; record: FoldRecord; attempt: number } | { kind: "action"; action: FoldAction };

export function orderEvents(records: FoldRecord[], actions: FoldAction[]): Step[] {
  const attempt = effectiveAttempts(records);
  const sortedActions = [...actions].sort((a, b) => a.seq - b.seq);
  const segmentOf = (r: FoldRecord) => sortedActions.filter((a) => a.seq < r.seq).length;
  const segments: FoldRecord[][] = sortedActions.map(() => []).concat([[]]);
  for (const r of records) segments[segmentOf(r)]?.push(r);
  const steps: Step[] = [];
  segments.forEach((segment, i) => {
    segment.sort((a, b) => compareRecords(a, b, attempt));
    for (const record of segment) steps.push({ kind: "record", record, attempt: attempt.get(record) ?? 1 });
    const action = sortedActions[i];
    if (action) steps.push({ kind: "action", action });
  });
  return steps;
}

export function deriveInvocation(records: FoldRecord[], actions: FoldAction[], config: LifecycleConfig): DerivedInvocation {
  if (records.length === 0) throw new Error("an invocation has at least one record");
  const steps = orderEvents(records, actions);
  const times = records.map((r) => Date.parse(r.at));
  const firstSeenAt = new Date(Math.min(...times)).toISOString();
  let state = initialState(firstSeenAt);
  let tool: string | null = null;
  let effectClass: string | null = null;
  let idempotencyKey: string | null = null;
  let userMessage: string | null = null;
  let lastCode: string | null = null;
  const transportAttempts = new Set<number>();

  for (const step of steps) {
    if (step.kind === "action") {
      const result = applyAction(state, step.action.action, { actor: step.action.actor, at: step.action.at, quorum: step.action.quorum });
      if (result.ok) state = result.state;
      continue;
    }
    const r = step.record;
    tool ??= r.tool;
    effectClass ??= r.effectClass;
    idempotencyKey ??= r.idempotencyKey;
    if (r.phase !== "probe") transportAttempts.add(step.attempt);
    if (r.userMessage) userMessage = r.userMessage;
    if (r.code) lastCode = r.code;
    const evidence = { ...r, attempt: step.attempt };
    state = applyEvidence(state, evidence, config);
    if (r.probeResult) state = applyProbeResult(state, evidence, config);
  }

  return {
    ...state,
    tool: tool ?? records[0]!.tool,
    effectClass,
    idempotencyKey,
    attemptCount: transportAttempts.size,
    firstSeenAt,
    lastAttemptAt: new Date(Math.max(...times)).toISOString(),
    userMessage,
    lastCode,
  };
}
