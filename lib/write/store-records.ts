import type { Tx } from "../db/driver";
import { timeOrderedUuid } from "../db/uuid";
import { foldInvocation, resumeFold, type FoldRecord, type FoldSnapshot } from "../outcome/fold";
import {
  foldConfig,
  foldFromHistory,
  selectStates,
  snapshotOf,
  stateOf,
  writeStates,
  type AttemptRow,
  type CreatedState,
  type GuardCheckRow,
  type InvocationRow,
  type TaskSpan,
  type UpdatedState,
} from "./states";
import type { PreparedRecord } from "./prepared-record";

// Storing prepared records: the attempts, and the invocation states the fold
// makes of them, through the write path's one statement
// (lib/write/states.ts). Used by ingest and by the guard.

/** An attempt's row for the write statement: its invocation's uid and seq, then ATTEMPT_COLUMNS. */
function attemptRow(p: PreparedRecord, uid: string, seq: number): AttemptRow {
  const n = p.normalized;
  return [
    uid,
    seq,
    p.eventKey,
    p.eventId,
    p.attemptId,
    p.attemptNo,
    p.phase,
    p.at,
    p.tool,
    p.effectClass,
    p.idempotencyKey,
    p.budgetLeftS,
    p.argsDigest,
    n.dialect,
    n.wrapper_dialect,
    n.outcome,
    n.commit_state,
    n.code,
    n.category,
    n.retry.directive,
    n.retry.not_before,
    n.retry.max_attempts_remaining,
    n.next_action,
    n.dispatch_stage,
    p.probeResult,
    n.safe_details,
    n.agent_message,
    n.user_message,
    n.items,
    p.envelope,
    n.ignored ?? null,
    p.arguments,
    p.summary,
  ];
}

/** What the fold reads of a prepared record; the same as of the row it is stored as (`toFoldRecord`). */
export function foldRecordOf(p: PreparedRecord, seq: number): FoldRecord {
  const n = p.normalized;
  return {
    eventKey: p.eventKey,
    seq,
    attemptNo: p.attemptNo,
    phase: p.phase,
    at: p.at,
    outcome: n.outcome,
    commitState: n.commit_state,
    nextAction: n.next_action,
    notBefore: n.retry.not_before,
    budgetLeftS: p.budgetLeftS,
    probeResult: p.probeResult,
    tool: p.tool,
    effectClass: p.effectClass,
    idempotencyKey: p.idempotencyKey,
    argsDigest: p.argsDigest,
    summary: p.summary,
    userMessage: n.user_message,
    code: n.code,
  };
}

function taskSpans(records: PreparedRecord[]): TaskSpan[] {
  const spans = new Map<string, TaskSpan>();
  for (const p of records) {
    const t = spans.get(p.taskId) ?? { taskId: p.taskId, first: p.at, last: p.at };
    if (p.at < t.first) t.first = p.at;
    if (p.at > t.last) t.last = p.at;
    spans.set(p.taskId, t);
  }
  return [...spans.values()].sort((a, b) => (a.taskId < b.taskId ? -1 : 1));
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Which stored row each invocation of a batch is folded onto; null: it is new. */
export type KnownRows = (invocationId: string) => InvocationRow | null;

export type Stored = {
  /** The event keys stored now (the others were stored before). */
  inserted: Set<string>;
  /** Every invocation written, as it now is (what a read would give). */
  rows: InvocationRow[];
  /** Of those, the ones created with an arguments digest or given another one: what to look for duplicates of. */
  digested: InvocationRow[];
};

// The row as the database now holds it. It may share objects with the fold that made it: folds
// never change what they are given (each step makes new objects), so neither can change the other.
const rowOf = (
  uid: string,
  invocationId: string,
  taskId: string,
  version: number,
  state: FoldSnapshot,
): InvocationRow =>
  ({ id: uid, invocation_id: invocationId, task_id: taskId, version, ...stateOf(state) }) as InvocationRow;

/**
 * Stores records: folds the new ones onto their invocations' stored states
 * and writes attempts and states in one statement. The stored states are
 * read first (one more round trip), or, with `known`, taken as given (the
 * rows this process wrote last; a new invocation otherwise). Either way the
 * write checks them: if anything it folded from changed meanwhile, nothing is
 * written and it throws serialization_failure, and the caller reads again.
 * Inside a transaction (the guard, lib/guard/guard.ts, so a guarded intent
 * is stored exactly like a posted one), `lock` holds the invocations from the
 * read on; the guard passes the rows it read and locked itself as `known`,
 * and its guard_checks row as `checks`, written by the same statement.
 */
export async function storeRecords(
  tx: Tx,
  runtimeId: string,
  records: PreparedRecord[],
  options: { lock?: boolean; known?: KnownRows; checks?: GuardCheckRow[] } = {},
): Promise<Stored> {
  const ids = [...new Set(records.map((p) => p.invocationId))].sort(byText);
  let existing: Map<string, InvocationRow>;
  let stored = new Set<string>();
  if (options.known) {
    existing = new Map(
      ids.flatMap((id) => {
        const row = options.known!(id);
        return row ? [[id, row] as const] : [];
      }),
    );
  } else {
    const read = await selectStates(
      tx,
      runtimeId,
      ids,
      records.map((p) => p.eventKey),
      options.lock,
    );
    existing = new Map(read.rows.map((r) => [r.invocation_id, r]));
    stored = read.stored;
  }
  const fresh = records.filter((p) => !stored.has(p.eventKey));
  const byInvocation = new Map<string, PreparedRecord[]>();
  for (const p of fresh) {
    const list = byInvocation.get(p.invocationId);
    if (list) list.push(p);
    else byInvocation.set(p.invocationId, [p]);
  }
  const config = foldConfig();
  const created: CreatedState[] = [];
  const updated: UpdatedState[] = [];
  const refold: InvocationRow[] = [];
  const attempts: AttemptRow[] = [];
  for (const [invocationId, list] of byInvocation) {
    const row = existing.get(invocationId);
    if (!row) {
      const uid = timeOrderedUuid();
      for (const p of list) attempts.push(attemptRow(p, uid, 1));
      created.push({
        uid,
        invocationId,
        taskId: list[0]!.taskId,
        state: foldInvocation(
          list.map((p) => foldRecordOf(p, 1)),
          [],
          config,
        ),
      });
      continue;
    }
    const version = row.version + 1;
    for (const p of list) attempts.push(attemptRow(p, row.id, version));
    const snapshot = snapshotOf(row);
    const resumed =
      snapshot &&
      resumeFold(
        snapshot,
        list.map((p) => foldRecordOf(p, version)),
        config,
      );
    if (resumed) updated.push({ before: row, version, state: resumed });
    else refold.push(row);
  }
  if (refold.length > 0) {
    // A late record that belongs before the stored ones, or a row from before the fold was kept: the whole history, with the new records.
    const fresher = new Map(
      refold.map((r) => [r.id, byInvocation.get(r.invocation_id)!.map((p) => foldRecordOf(p, r.version + 1))]),
    );
    const folded = await foldFromHistory(
      tx,
      runtimeId,
      refold.map((r) => r.id),
      fresher,
    );
    for (const row of refold) updated.push({ before: row, version: row.version + 1, state: folded.get(row.id)! });
  }
  attempts.sort((a, b) => byText(a[2] as string, b[2] as string));
  await writeStates(tx, runtimeId, { created, updated, attempts, tasks: taskSpans(fresh), checks: options.checks });
  const createdRows = created.map((c) => rowOf(c.uid, c.invocationId, c.taskId, 1, c.state));
  const updatedRows = updated.map((u) =>
    rowOf(u.before.id, u.before.invocation_id, u.before.task_id, u.version, u.state),
  );
  return {
    inserted: new Set(fresh.map((p) => p.eventKey)),
    rows: [...createdRows, ...updatedRows],
    digested: [
      ...createdRows.filter((r) => r.args_digest !== null),
      ...updatedRows.filter((r, i) => r.args_digest !== null && r.args_digest !== updated[i]!.before.args_digest),
    ],
  };
}
