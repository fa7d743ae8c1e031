import "server-only";
import { stringifyExactJson } from "../json/exact";
import type { Tx } from "../db/driver";
import { env } from "../env";
import type { OperatorAction } from "../outcome/actions";
import { foldInvocation, type FoldAction, type FoldCursor, type FoldRecord, type FoldSnapshot } from "../outcome/fold";
import type { ArgumentsEdit } from "../outcome/fold-action";
import type { LifecycleState, Resolution } from "../outcome/lifecycle";
import type { StoredStatus } from "../outcome/status";
import { CHECK_ARGUMENTS, duplicateActions } from "../outcome/duplicates";
import { rowsSpliceable, TRANSITION_COLUMNS } from "./chain-links";
import { ATTEMPT_ROW_COLUMNS, STATE_COLUMNS, writeStatement, type WriteParts } from "./write-statement";

type StateColumn = (typeof STATE_COLUMNS)[number][0];

/** The rest of the fold, kept in `invocations.fold`. */
type StoredFold = Pick<LifecycleState, "settled" | "lastAttempt" | "approvals"> & {
  cursor: FoldCursor;
  /** Absent on rows stored before approvals were bound to arguments: none was. */
  approvedDigest?: string | null;
  argsMismatch?: boolean;
  /** Approve with edits (absent: none): the edited arguments pending approval, and the last approved ones. */
  pendingEdit?: ArgumentsEdit | null;
  approvedEdit?: ArgumentsEdit | null;
};

/** An invocation row as the write path reads it (SELECT … FOR UPDATE of `INVOCATION_COLUMNS`). */
export type InvocationRow = {
  id: string;
  invocation_id: string;
  task_id: string;
  version: number;
} & { [K in StateColumn]: unknown };

const ROW_COLUMNS = [
  ["id::text", "text"],
  ["invocation_id", "text"],
  ["task_id", "text"],
  ["version", "int"],
  ...STATE_COLUMNS,
] as const;

/**
 * How a writer reads the fold it writes back, and the actions it folds: exactly (lib/json), so edited arguments
 * (pendingEdit, approvedEdit) keep an integer past 2^53 to the digit through the next record or action.
 */
export const FOLD_READ = { exactJson: true } as const;

/** What the write path selects of an invocation it folds onto. */
export const INVOCATION_COLUMNS = ROW_COLUMNS.map(([c]) => c).join(", ");

// Each key is looked up on its own (LATERAL … LIMIT 1, which the planner cannot
// turn into a join): with equalities on every column of the unique key, no
// plan — not even one made while the table was empty — can take another
// index that starts with runtime_id and filter the runtime's rows one by one.
const readStatement = (lock: boolean) => ({
  name: lock ? "settle_read_states_locked" : "settle_read_states",
  // $1 runtime, $2 invocation ids (sorted: the order they are locked in), $3 event keys:
  // the invocations (locked, when asked) and which of the keys are stored already, in one round trip.
  text: `SELECT i.*, NULL::text[] AS stored
      FROM unnest($2::text[]) AS k(invocation_id)
      JOIN LATERAL (SELECT ${INVOCATION_COLUMNS} FROM invocations
                     WHERE runtime_id = $1::uuid AND invocation_id = k.invocation_id LIMIT 1${lock ? " FOR UPDATE" : ""}) AS i ON true
    UNION ALL
    SELECT ${ROW_COLUMNS.map(([, t]) => `NULL::${t}`).join(", ")},
           ARRAY(SELECT a.event_key FROM unnest($3::text[]) AS e(event_key)
                   JOIN LATERAL (SELECT event_key FROM attempts WHERE runtime_id = $1::uuid AND event_key = e.event_key LIMIT 1) AS a ON true)`,
});

/**
 * The stored rows of these invocations, and which of these event keys are
 * stored already. `lock` holds the rows until the enclosing transaction ends.
 */
export async function selectStates(
  tx: Tx,
  runtimeId: string,
  invocationIds: string[],
  eventKeys: string[],
  lock = false,
): Promise<{ rows: InvocationRow[]; stored: Set<string> }> {
  const params = [runtimeId, invocationIds, eventKeys];
  const result = await tx.query<InvocationRow & { stored: string[] | null }>(readStatement(lock), params, FOLD_READ);
  const rows = result.filter((r) => r.stored === null);
  return { rows, stored: new Set(result.find((r) => r.stored !== null)?.stored ?? []) };
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** The stored state as a fold snapshot; null for a row written before the fold was kept (it is folded whole once). */
export function snapshotOf(row: InvocationRow): FoldSnapshot | null {
  const fold = row.fold as StoredFold | null;
  if (!fold) return null;
  return {
    status: row.status as StoredStatus,
    commitState: row.commit_state as FoldSnapshot["commitState"],
    nextAction: row.next_action as FoldSnapshot["nextAction"],
    conflict: Boolean(row.conflict),
    resolution: (row.resolution as Resolution | null) ?? null,
    stallAt: str(row.stall_at),
    notBefore: str(row.not_before),
    statusSince: String(row.status_since),
    settled: fold.settled,
    lastAttempt: fold.lastAttempt,
    approvals: fold.approvals,
    assignee: str(row.assignee),
    tool: String(row.tool),
    effectClass: str(row.effect_class),
    idempotencyKey: str(row.idempotency_key),
    argsDigest: str(row.args_digest),
    summary: str(row.summary),
    approvedDigest: fold.approvedDigest ?? null,
    argsMismatch: fold.argsMismatch ?? false,
    pendingEdit: fold.pendingEdit ?? null,
    approvedEdit: fold.approvedEdit ?? null,
    attemptCount: Number(row.attempt_count),
    firstSeenAt: String(row.first_seen_at),
    lastAttemptAt: String(row.last_attempt_at),
    userMessage: str(row.user_message),
    lastCode: str(row.last_code),
    cursor: fold.cursor,
  };
}

export function stateOf(d: FoldSnapshot): Record<StateColumn, unknown> {
  const fold: StoredFold = {
    settled: d.settled,
    lastAttempt: d.lastAttempt,
    approvals: d.approvals,
    cursor: d.cursor,
    ...(d.approvedDigest !== null ? { approvedDigest: d.approvedDigest } : {}),
    ...(d.argsMismatch ? { argsMismatch: true } : {}),
    ...(d.pendingEdit ? { pendingEdit: d.pendingEdit } : {}),
    ...(d.approvedEdit ? { approvedEdit: d.approvedEdit } : {}),
  };
  return {
    tool: d.tool,
    effect_class: d.effectClass,
    idempotency_key: d.idempotencyKey,
    status: d.status,
    commit_state: d.commitState,
    next_action: d.nextAction,
    conflict: d.conflict,
    attempt_count: d.attemptCount,
    first_seen_at: d.firstSeenAt,
    last_attempt_at: d.lastAttemptAt,
    status_since: d.statusSince,
    stall_at: d.stallAt,
    not_before: d.notBefore,
    assignee: d.assignee,
    user_message: d.userMessage,
    last_code: d.lastCode,
    resolution: d.resolution,
    fold,
    args_digest: d.argsDigest,
    summary: d.summary,
  };
}

export const foldConfig = () => ({ stallWindowS: env().SETTLE_STALL_WINDOW_S });

/** The queue's free-text search looks in these ids (decision 008). */
const searchText = (taskId: string, invocationId: string, key: string | null) =>
  `${taskId} ${invocationId} ${key ?? ""}`;

// ── Reading what a whole fold needs ────────────────────────────────────────

type HistoryRecordRow = {
  invocation_uid: string;
  event_key: string;
  seq: number;
  attempt_no: number | null;
  phase: FoldRecord["phase"];
  at: string;
  outcome: FoldRecord["outcome"];
  commit_state: FoldRecord["commitState"];
  next_action: FoldRecord["nextAction"];
  not_before: string | null;
  budget_left_s: number | null;
  probe_result: FoldRecord["probeResult"];
  tool: string;
  effect_class: string | null;
  idempotency_key: string | null;
  args_digest: string | null;
  summary: string | null;
  user_message: string | null;
  code: string | null;
};
type HistoryActionRow = {
  invocation_uid: string;
  seq: number;
  at: string;
  actor: string;
  payload: { action: OperatorAction; quorum?: number; arguments_digest?: string };
};

const loadRecords = {
  name: "settle_history_records",
  text: `SELECT invocation_uid::text, event_key, seq, attempt_no, phase, at, outcome, commit_state, next_action,
                not_before, budget_left_s, probe_result, tool, effect_class, idempotency_key, args_digest, summary, user_message, code
           FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = ANY($2::uuid[])`,
};
// Comments and reviews (of a duplicate, of other arguments) change no state: the fold passes over them.
const FOLDLESS_ACTIONS = ["comment", ...duplicateActions, CHECK_ARGUMENTS];
const loadActions = {
  name: "settle_history_actions",
  text: `SELECT invocation_uid::text, seq, at, actor, payload FROM invocation_actions
          WHERE invocation_uid = ANY($1::uuid[]) AND action <> ALL($2::text[])`,
};

export const toFoldRecord = (r: HistoryRecordRow): FoldRecord => ({
  eventKey: r.event_key,
  seq: Number(r.seq),
  attemptNo: r.attempt_no === null ? null : Number(r.attempt_no),
  phase: r.phase,
  at: r.at,
  outcome: r.outcome,
  commitState: r.commit_state,
  nextAction: r.next_action,
  notBefore: r.not_before,
  budgetLeftS: r.budget_left_s === null ? null : Number(r.budget_left_s),
  probeResult: r.probe_result,
  tool: r.tool,
  effectClass: r.effect_class,
  idempotencyKey: r.idempotency_key,
  argsDigest: r.args_digest,
  summary: r.summary,
  userMessage: r.user_message,
  code: r.code,
});

/**
 * Folds these invocations from their whole history: for a record that
 * belongs before the stored ones, and for rows written before the fold was
 * kept. `fresh` adds records not stored yet, by invocation uid.
 */
export async function foldFromHistory(
  tx: Tx,
  runtimeId: string,
  uids: string[],
  fresh: ReadonlyMap<string, FoldRecord[]> = new Map(),
): Promise<Map<string, FoldSnapshot>> {
  const out = new Map<string, FoldSnapshot>();
  if (uids.length === 0) return out;
  const records = await tx.query<HistoryRecordRow>(loadRecords, [runtimeId, uids]);
  const actions = await tx.query<HistoryActionRow>(loadActions, [uids, FOLDLESS_ACTIONS], FOLD_READ);
  const byUid = new Map(uids.map((uid) => [uid, { records: [] as FoldRecord[], actions: [] as FoldAction[] }]));
  for (const r of records) byUid.get(r.invocation_uid)?.records.push(toFoldRecord(r));
  for (const a of actions)
    byUid.get(a.invocation_uid)?.actions.push({
      seq: Number(a.seq),
      at: a.at,
      actor: a.actor,
      action: a.payload.action,
      quorum: a.payload.quorum,
      argumentsDigest: a.payload.arguments_digest,
    });
  for (const [uid, records] of fresh) byUid.get(uid)?.records.push(...records);
  for (const [uid, h] of byUid)
    if (h.records.length > 0) out.set(uid, foldInvocation(h.records, h.actions, foldConfig()));
  return out;
}

// ── Writing ────────────────────────────────────────────────────────────────

/** A new invocation: its row is inserted with its first state (version 1), never as a placeholder. */
export type CreatedState = { uid: string; invocationId: string; taskId: string; state: FoldSnapshot };
/** A stored one: `before` is the row the state was folded from, `version` the one it gets. */
export type UpdatedState = { before: InvocationRow; version: number; state: FoldSnapshot };
export type TaskSpan = { taskId: string; first: string; last: string };
/** An attempt row as the write travels it: its invocation's uid, its seq, then the columns of `attemptColumns`. */
export type AttemptRow = [uid: string, seq: number, ...values: unknown[]];

/** A status change's row, in the order of TRANSITION_COLUMNS (its canonical content's). */
const transitionOf = (uid: string, from: string | null, s: FoldSnapshot, version: number) =>
  [
    uid,
    s.tool,
    s.effectClass,
    from,
    s.status,
    s.commitState,
    s.resolution?.by ?? null,
    s.notBefore,
    version,
    // The status began at status_since (domain time), so metrics follow the runtime's clock.
    s.statusSince,
  ] as const;
type Transition = ReturnType<typeof transitionOf>;

/**
 * Notes for the metrics rollups are due for an invocation first seen more than
 * 10 minutes ago (by the database's clock, in the statement); this process's
 * clock only leaves out the ones that cannot be due.
 */
const NOTE_AFTER_MS = 9 * 60 * 1000;

/** A guard_checks row written with the intent the guard allowed (lib/guard/guard.ts). */
export type GuardCheckRow = {
  task_id: string;
  invocation_id: string;
  tool: string;
  idempotency_key: string;
  allow: boolean;
  reason: string | null;
  at: string;
};

export type Write = {
  created?: CreatedState[];
  updated?: UpdatedState[];
  attempts?: AttemptRow[];
  tasks?: TaskSpan[];
  checks?: GuardCheckRow[];
};

/**
 * Writes new attempts and the invocation states folded from them, with their
 * status changes (invocation_transitions), search rows and metrics notes, in
 * one statement. Throws serialization_failure (40001) if anything it was
 * folded from changed meanwhile: nothing is then written, and the caller
 * reads again.
 */
export async function writeStates(tx: Tx, runtimeId: string, write: Write): Promise<void> {
  const { created = [], updated = [], attempts = [], tasks = [], checks = [] } = write;
  if (created.length === 0 && updated.length === 0 && attempts.length === 0 && checks.length === 0) return;
  const transitions: Transition[] = [];
  const search: Array<{ uid: string; ids: string }> = [];
  const digests: Array<{ uid: string; tool: string; args_digest: string }> = [];
  const notes: Array<{
    uid: string;
    first_seen_at: unknown;
    earliest: string;
    committed_since: unknown;
    idempotency_key: unknown;
  }> = [];
  for (const c of created) {
    transitions.push(transitionOf(c.uid, null, c.state, 1));
    search.push({ uid: c.uid, ids: searchText(c.taskId, c.invocationId, c.state.idempotencyKey) });
    if (c.state.argsDigest !== null) digests.push({ uid: c.uid, tool: c.state.tool, args_digest: c.state.argsDigest });
    // Late data: a new invocation first seen in an hour the rollups may already have counted.
    notes.push({
      uid: c.uid,
      first_seen_at: c.state.firstSeenAt,
      earliest: c.state.firstSeenAt,
      committed_since: null,
      idempotency_key: null,
    });
  }
  for (const u of updated) {
    const b = u.before;
    if (b.status !== u.state.status || b.commit_state !== u.state.commitState)
      transitions.push(transitionOf(b.id, String(b.status), u.state, u.version));
    if (b.idempotency_key !== u.state.idempotencyKey)
      search.push({ uid: b.id, ids: searchText(b.task_id, b.invocation_id, u.state.idempotencyKey) });
    if (u.state.argsDigest !== null && b.args_digest !== u.state.argsDigest)
      digests.push({ uid: b.id, tool: u.state.tool, args_digest: u.state.argsDigest });
    const firstSeen = String(b.first_seen_at);
    notes.push({
      uid: b.id,
      first_seen_at: firstSeen,
      earliest: Date.parse(firstSeen) <= Date.parse(u.state.firstSeenAt) ? firstSeen : u.state.firstSeenAt,
      committed_since: b.commit_state === "committed" ? b.status_since : null,
      idempotency_key: b.idempotency_key,
    });
  }
  // Only what this write has: a single record writes three or four of the parts, and a part
  // left out costs nothing (each part's table and indexes are opened even for no rows).
  const dueNotes = notes.filter((n) => Date.parse(n.earliest) < Date.now() - NOTE_AFTER_MS);
  const parts: Array<[keyof WriteParts, unknown[]]> = [
    [
      "created",
      created.map((c) => ({ id: c.uid, invocation_id: c.invocationId, task_id: c.taskId, ...stateOf(c.state) })),
    ],
    [
      "changes",
      updated.map((u) => ({ id: u.before.id, expected: u.before.version, version: u.version, ...stateOf(u.state) })),
    ],
    ["attempts", attempts],
    ["transitions", transitions],
    ["search", search],
    ["digests", digests],
    ["tasks", tasks.map((t) => ({ task_id: t.taskId, first: t.first, last: t.last }))],
    ["notes", dueNotes],
    ["checks", checks],
  ];
  const present = parts.filter(([, rows]) => rows.length > 0);
  const shape = Object.fromEntries(parts.map(([name, rows]) => [name, rows.length > 0])) as WriteParts;
  const spliced = rowsSpliceable(attempts, ATTEMPT_ROW_COLUMNS) && rowsSpliceable(transitions, TRANSITION_COLUMNS);
  // A caller's integers past 2^53 (BigInts in arguments and envelopes, lib/json) are written as their digits: jsonb keeps them.
  await tx.query(writeStatement(shape, spliced), [runtimeId, ...present.map(([, rows]) => stringifyExactJson(rows))]);
}
