import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { OperatorAction } from "../actions";
import {
  foldInvocation,
  resumeFold,
  resumeWithAction,
  type FoldAction,
  type FoldRecord,
  type FoldSnapshot,
} from "../fold";

// The write path folds new records onto the stored state (resumeFold) and
// falls back to the whole history only when resuming refuses. Whatever the
// delivery, the state it keeps must be the whole fold's, field for field.

const config = { stallWindowS: 300 };
const T0 = Date.parse("2026-11-29T05:00:00.000Z");

const evidence = [
  { outcome: "unknown", commitState: "unknown", nextAction: "none" },
  { outcome: "unknown", commitState: "unknown", nextAction: "verify_operation" },
  { outcome: "ok", commitState: "committed", nextAction: "none" },
  { outcome: "retryable", commitState: "not_committed", nextAction: "wait_and_retry" },
  { outcome: "permanent", commitState: "not_committed", nextAction: "correct_input" },
  { outcome: "permanent", commitState: "partial", nextAction: "verify_operation" },
  { outcome: "permanent", commitState: "not_committed", nextAction: "request_approval" },
  { outcome: "unknown", commitState: "unknown", nextAction: "escalate" },
] as const;

const recordArb = fc.record({
  attemptNo: fc.option(fc.integer({ min: 0, max: 4 }), { freq: 4 }),
  phase: fc.constantFrom("intent", "outcome", "outcome", "probe"),
  t: fc.integer({ min: 0, max: 120 }),
  evidence: fc.constantFrom(...evidence),
  probeResult: fc.option(fc.constantFrom("found", "absent", "failed"), { freq: 6 }),
  budgetLeftS: fc.option(fc.integer({ min: 1, max: 90 }), { freq: 3 }),
  notBefore: fc.option(fc.integer({ min: 0, max: 200 }), { freq: 3 }),
  effectClass: fc.option(fc.constantFrom("money", "create", "read"), { freq: 2 }),
  idempotencyKey: fc.option(fc.constantFrom("k1", "k2"), { freq: 2 }),
  userMessage: fc.option(fc.constantFrom("", "try later", "done"), { freq: 2 }),
  code: fc.option(fc.constantFrom("", "E1", "E2"), { freq: 2 }),
  tool: fc.constantFrom("create_order", "charge_card"),
});

const actionArb: fc.Arbitrary<OperatorAction> = fc.constantFrom<OperatorAction>(
  { action: "approve" },
  { action: "reject" },
  { action: "request_verification" },
  { action: "record_verification", result: "found" },
  { action: "record_verification", result: "absent" },
  { action: "mark_reconciled", commit_state: "not_committed", note: "checked" },
  { action: "escalate", note: "why" },
  { action: "assign", assignee: "ana@example.com" },
  { action: "unassign" },
);

type RawRecord = typeof recordArb extends fc.Arbitrary<infer R> ? R : never;
type Delivery =
  { kind: "batch"; records: RawRecord[] } | { kind: "action"; action: OperatorAction; actor: string; t: number };
const deliveryArb: fc.Arbitrary<Delivery> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      records: fc.array(recordArb, { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("action" as const),
      action: actionArb,
      actor: fc.constantFrom("ana", "bo"),
      t: fc.integer({ min: 0, max: 200 }),
    }),
  },
);

let counter = 0;
/** A record's fields but its attempt, phase, time and evidence: all empty (the hand-written cases below). */
const blank = {
  budgetLeftS: null,
  notBefore: null,
  effectClass: null,
  idempotencyKey: null,
  userMessage: null,
  code: null,
  tool: "create_order" as const,
  probeResult: null,
};

function toRecord(r: RawRecord, seq: number): FoldRecord {
  counter += 1;
  const phase = r.phase as FoldRecord["phase"];
  const e = phase === "intent" ? evidence[0] : r.evidence;
  return {
    eventKey: `e${String(counter).padStart(6, "0")}`,
    seq,
    attemptNo: r.attemptNo,
    phase,
    at: new Date(T0 + r.t * 1000).toISOString(),
    outcome: e.outcome,
    commitState: e.commitState,
    nextAction: e.nextAction,
    notBefore: r.notBefore === null ? null : new Date(T0 + r.notBefore * 1000).toISOString(),
    budgetLeftS: r.budgetLeftS,
    probeResult: phase === "outcome" ? r.probeResult : null,
    tool: r.tool,
    effectClass: r.effectClass,
    idempotencyKey: r.idempotencyKey,
    userMessage: r.userMessage,
    code: r.code,
  };
}

// The cursor is a summary that only has to be safe, not equal: a resumed one
// may be more careful than the whole fold's. It is carried into the next
// step, so an unsafe cursor shows as a wrong state later.
const state = ({ cursor: _cursor, ...derived }: FoldSnapshot) => derived;

/** Plays a delivery the way the write path does; returns how often resuming was possible. */
function play(deliveries: Delivery[]): { resumed: number; refolded: number } {
  const records: FoldRecord[] = [];
  const actions: FoldAction[] = [];
  let snapshot: FoldSnapshot | null = null;
  let version = 0;
  const tally = { resumed: 0, refolded: 0 };
  for (const d of deliveries) {
    if (d.kind === "action") {
      if (!snapshot) continue; // nothing to act on yet
      version += 1;
      const at = new Date(T0 + d.t * 1000).toISOString();
      const step = resumeWithAction(snapshot, d.action, { actor: d.actor, at, quorum: 2 });
      actions.push({ seq: version, at, actor: d.actor, action: d.action, quorum: 2 });
      expect(state(step.snapshot)).toEqual(state(foldInvocation(records, actions, config)));
      snapshot = step.snapshot;
      continue;
    }
    version += 1;
    const fresh = d.records.map((r) => toRecord(r, version));
    records.push(...fresh);
    const whole = foldInvocation(records, actions, config);
    const resumed = snapshot ? resumeFold(snapshot, fresh, config) : null;
    if (resumed) {
      expect(state(resumed)).toEqual(state(whole));
      tally.resumed += 1;
    } else tally.refolded += 1;
    // What is stored goes through JSON (jsonb and timestamp columns).
    snapshot = JSON.parse(JSON.stringify(resumed ?? whole)) as FoldSnapshot;
  }
  return tally;
}

describe("resuming a fold equals folding the whole history", () => {
  it("for any records, in any order and batching, with operator actions between", () => {
    fc.assert(
      fc.property(fc.array(deliveryArb, { minLength: 1, maxLength: 12 }), (deliveries) => {
        play(deliveries);
      }),
      { numRuns: 1500 },
    );
  }, 30_000);

  it("records that arrive in fold order always resume (no re-read of the history)", () => {
    fc.assert(
      fc.property(
        fc.array(recordArb, { minLength: 2, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 10 }),
        (raw, cuts) => {
          // Numbered, strictly later: the normal life of an invocation.
          const ordered = raw
            .map((r, i) => ({ ...r, attemptNo: 1 + Math.floor(i / 3), t: i }))
            .map((r, i) => ({ ...r, phase: (["intent", "outcome", "probe"] as const)[i % 3]! }));
          const deliveries: Delivery[] = [];
          for (let i = 0, c = 0; i < ordered.length; c += 1) {
            const size = cuts[c % cuts.length]!;
            deliveries.push({ kind: "batch", records: ordered.slice(i, i + size) });
            i += size;
          }
          const { refolded } = play(deliveries);
          expect(refolded).toBe(1); // only the first batch, which has nothing to resume from
        },
      ),
      { numRuns: 300 },
    );
  }, 30_000);

  it("an unnumbered probe with no numbered record before it refuses to resume once one arrives (it spoke for a default)", () => {
    // The probe speaks for attempt 1 while nothing is numbered; an attempt 0 recorded at the same time makes it speak for 0.
    // (An operator's action after the probe, so the new record comes after it whatever its attempt.)
    const probe = toRecord({ ...blank, attemptNo: null, phase: "probe", t: 0, evidence: evidence[0] }, 1);
    const approve: FoldAction = { seq: 2, at: new Date(T0).toISOString(), actor: "ana", action: { action: "approve" } };
    const snapshot = foldInvocation([probe], [approve], config);
    const zero = toRecord({ ...blank, attemptNo: 0, phase: "intent", t: 0, evidence: evidence[0] }, 3);
    expect(resumeFold(snapshot, [zero], config)).toBeNull();
    expect(state(foldInvocation([probe, zero], [approve], config)).status).toBe("pending");
  });

  it("a late record that belongs before the stored ones refuses to resume", () => {
    const first = [toRecord({ ...blank, attemptNo: 2, phase: "intent", t: 10, evidence: evidence[0] }, 1)];
    const snapshot = foldInvocation(first, [], config);
    const late = toRecord({ ...blank, attemptNo: 1, phase: "outcome", t: 5, evidence: evidence[2] }, 2);
    expect(resumeFold(snapshot, [late], config)).toBeNull();
  });
});
