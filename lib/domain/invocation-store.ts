import type { Tx } from "../db/driver";
import { env } from "../env";
import type { OperatorAction } from "./actions";
import { foldInvocation, type FoldAction, type FoldCursor, type FoldRecord, type FoldSnapshot } from "./fold";
import type { LifecycleState, Resolution } from "./lifecycle";
import type { StoredStatus } from "./status";

// The one path that writes an invocation's state, whoever changes it: ingest,
// the guard (through ingest), operator actions and the policy job. One
// statement writes the rows and everything that follows from them — the
// status-change log, the search row, the metrics notes — so no writer can
// forget one, and no per-row trigger is paid for.
//
// The state columns are a projection of the fold (lib/domain/fold.ts); the
// `fold` column keeps the rest of it (settled, last attempt, approvals, the
// cursor), so the next change folds onto the stored state instead of reading
// the invocation's whole history.

/** Columns of `invocations` that the fold writes, and their SQL types. */
const STATE_COLUMNS = [
  ["tool", "text"],
  ["effect_class", "text"],
  ["idempotency_key", "text"],
  ["status", "text"],
  ["commit_state", "text"],
  ["next_action", "text"],
  ["conflict", "boolean"],
  ["attempt_count", "int"],
  ["first_seen_at", "timestamptz"],
  ["last_attempt_at", "timestamptz"],
  ["status_since", "timestamptz"],
  ["stall_at", "timestamptz"],
  ["not_before", "timestamptz"],
  ["assignee", "text"],
  ["user_message", "text"],
  ["last_code", "text"],
  ["resolution", "jsonb"],
  ["fold", "jsonb"],
] as const;
type StateColumn = (typeof STATE_COLUMNS)[number][0];

/** The rest of the fold, kept in `invocations.fold`. */
type StoredFold = Pick<LifecycleState, "settled" | "lastAttempt" | "approvals"> & { cursor: FoldCursor };

/** An invocation row as the write path reads it (SELECT … FOR UPDATE of `INVOCATION_COLUMNS`). */
export type InvocationRow = {
  id: string;
  invocation_id: string;
  task_id: string;
  version: number;
} & { [K in StateColumn]: unknown };

/** What the write path selects of a locked invocation. */
export const INVOCATION_COLUMNS = `id::text, invocation_id, task_id, version, ${STATE_COLUMNS.map(([c]) => c).join(", ")}`;

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
    attemptCount: Number(row.attempt_count),
    firstSeenAt: String(row.first_seen_at),
    lastAttemptAt: String(row.last_attempt_at),
    userMessage: str(row.user_message),
    lastCode: str(row.last_code),
    cursor: fold.cursor,
  };
}

function stateOf(d: FoldSnapshot): Record<StateColumn, unknown> {
  const fold: StoredFold = { settled: d.settled, lastAttempt: d.lastAttempt, approvals: d.approvals, cursor: d.cursor };
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
  };
}

export const foldConfig = () => ({ stallWindowS: env().SETTLE_STALL_WINDOW_S });

/** The queue's free-text search looks in these ids (decision 008). */
const searchText = (taskId: string, invocationId: string, key: string | null) => `${taskId} ${invocationId} ${key ?? ""}`;

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
  user_message: string | null;
  code: string | null;
};
type HistoryActionRow = { invocation_uid: string; seq: number; at: string; actor: string; payload: { action: OperatorAction; quorum?: number } };

const loadRecords = {
  name: "settle_history_records",
  text: `SELECT invocation_uid::text, event_key, seq, attempt_no, phase, at, outcome, commit_state, next_action,
                not_before, budget_left_s, probe_result, tool, effect_class, idempotency_key, user_message, code
           FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = ANY($2::uuid[])`,
};
const loadActions = {
  name: "settle_history_actions",
  text: `SELECT invocation_uid::text, seq, at, actor, payload FROM invocation_actions
          WHERE invocation_uid = ANY($1::uuid[]) AND action <> 'comment'`,
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
  userMessage: r.user_message,
  code: r.code,
});

/**
 * Folds these invocations from their whole history: for a record that
 * belongs before the stored ones, and for rows written before the fold was
 * kept. `extra` adds actions not yet stored.
 */
export async function foldFromHistory(tx: Tx, runtimeId: string, uids: string[]): Promise<Map<string, FoldSnapshot>> {
  const out = new Map<string, FoldSnapshot>();
  if (uids.length === 0) return out;
  const records = await tx.query<HistoryRecordRow>(loadRecords, [runtimeId, uids]);
  const actions = await tx.query<HistoryActionRow>(loadActions, [uids]);
  const byUid = new Map(uids.map((uid) => [uid, { records: [] as FoldRecord[], actions: [] as FoldAction[] }]));
  for (const r of records) byUid.get(r.invocation_uid)?.records.push(toFoldRecord(r));
  for (const a of actions) byUid.get(a.invocation_uid)?.actions.push({ seq: Number(a.seq), at: a.at, actor: a.actor, action: a.payload.action, quorum: a.payload.quorum });
  for (const [uid, h] of byUid) if (h.records.length > 0) out.set(uid, foldInvocation(h.records, h.actions, foldConfig()));
  return out;
}

// ── Writing ────────────────────────────────────────────────────────────────

/** A new invocation: its row is inserted with its first state (no placeholder, one index entry each). */
export type CreatedState = { uid: string; invocationId: string; taskId: string; state: FoldSnapshot };
/** A stored one: `before` is the row as locked, `version` the one it gets. */
export type UpdatedState = { before: InvocationRow; version: number; state: FoldSnapshot };
export type TaskSpan = { taskId: string; first: string; last: string };

const recordset = (columns: ReadonlyArray<readonly [string, string]>) => columns.map(([c, t]) => `${c} ${t}`).join(", ");
const STATE_NAMES = STATE_COLUMNS.map(([c]) => c);

// $1 runtime, $2 created rows, $3 updated rows, $4 transitions, $5 search rows, $6 task spans, $7 metric notes.
// Rows are inserted in invocation id order, as every writer locks them, so concurrent writers queue instead of deadlocking.
const writeStatesStatement = {
  name: "settle_write_states",
  text: `WITH created AS (
      INSERT INTO invocations (id, runtime_id, invocation_id, task_id, version, updated_at, ${STATE_NAMES.join(", ")})
      SELECT x.id, $1::uuid, x.invocation_id, x.task_id, x.version, now(), ${STATE_NAMES.map((c) => `x.${c}`).join(", ")}
        FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, invocation_id text, task_id text, version int, ${recordset(STATE_COLUMNS)})
       ORDER BY x.invocation_id
      ON CONFLICT (runtime_id, invocation_id) DO NOTHING
      RETURNING id),
    changes AS (SELECT * FROM jsonb_to_recordset($3::jsonb) AS x(id uuid, version int, ${recordset(STATE_COLUMNS)})),
    updated AS (
      UPDATE invocations AS i SET version = x.version, updated_at = now(), ${STATE_NAMES.map((c) => `${c} = x.${c}`).join(", ")}
        FROM changes AS x
       WHERE i.id = x.id AND i.id = ANY(ARRAY(SELECT id FROM changes))
      RETURNING i.id),
    transitions AS (
      INSERT INTO invocation_transitions (invocation_uid, runtime_id, tool, effect_class, from_status, to_status, commit_state, resolution_by, not_before, version, at)
      SELECT t.uid, $1::uuid, t.tool, t.effect_class, t.from_status, t.to_status, t.commit_state, t.resolution_by, t.not_before, t.version, t.at
        FROM jsonb_to_recordset($4::jsonb) AS t(uid uuid, created boolean, tool text, effect_class text, from_status text, to_status text,
                                                 commit_state text, resolution_by text, not_before timestamptz, version int, at timestamptz)
       WHERE NOT t.created OR t.uid IN (SELECT id FROM created)
       ORDER BY t.uid),
    search AS (
      INSERT INTO invocation_search (invocation_uid, ids)
      SELECT s.uid, s.ids FROM jsonb_to_recordset($5::jsonb) AS s(uid uuid, created boolean, ids text)
       WHERE NOT s.created OR s.uid IN (SELECT id FROM created)
      ON CONFLICT (invocation_uid) DO UPDATE SET ids = excluded.ids),
    tasks AS (
      INSERT INTO tasks (runtime_id, task_id, first_seen_at, last_seen_at)
      SELECT $1::uuid, t.task_id, t.first, t.last FROM jsonb_to_recordset($6::jsonb) AS t(task_id text, first timestamptz, last timestamptz)
       ORDER BY t.task_id
      ON CONFLICT (runtime_id, task_id) DO UPDATE
        SET first_seen_at = LEAST(tasks.first_seen_at, excluded.first_seen_at), last_seen_at = GREATEST(tasks.last_seen_at, excluded.last_seen_at)
        WHERE tasks.first_seen_at > excluded.first_seen_at OR tasks.last_seen_at < excluded.last_seen_at),
    -- Trust-metric rollups (decision 009) may already count an invocation first seen more than 10 minutes
    -- ago: a change to one is noted with the values it had before. The 5 minutes between this bound and
    -- the rollups' 15 cover the time from this statement to its commit.
    notes AS (
      INSERT INTO metric_dirty (uid, runtime_id, first_seen_at, committed_since, idempotency_key)
      SELECT n.uid, $1::uuid, n.first_seen_at, n.committed_since, n.idempotency_key
        FROM jsonb_to_recordset($7::jsonb) AS n(uid uuid, created boolean, first_seen_at timestamptz, earliest timestamptz, committed_since timestamptz, idempotency_key text)
       WHERE n.earliest < clock_timestamp() - interval '10 minutes' AND (NOT n.created OR n.uid IN (SELECT id FROM created)))
    SELECT (SELECT coalesce(array_agg(id::text), '{}') FROM created) AS created,
           (SELECT count(*)::int FROM updated) AS updated`,
};

type Transition = {
  uid: string;
  created: boolean;
  tool: string;
  effect_class: string | null;
  from_status: string | null;
  to_status: string;
  commit_state: string;
  resolution_by: string | null;
  not_before: string | null;
  version: number;
  at: string;
};

const transitionOf = (uid: string, created: boolean, from: string | null, s: FoldSnapshot, version: number): Transition => ({
  uid,
  created,
  tool: s.tool,
  effect_class: s.effectClass,
  from_status: from,
  to_status: s.status,
  commit_state: s.commitState,
  resolution_by: s.resolution?.by ?? null,
  not_before: s.notBefore,
  version,
  // The status began at status_since (domain time), so metrics follow the runtime's clock.
  at: s.statusSince,
});

/**
 * Writes new and changed invocation states in one statement, with their
 * status changes (invocation_transitions), search rows and metrics notes.
 * Returns the uids of the created rows: a new invocation that a concurrent
 * writer created first is not among them, and nothing of it was written.
 */
export async function writeStates(tx: Tx, runtimeId: string, created: CreatedState[], updated: UpdatedState[], tasks: TaskSpan[] = []): Promise<Set<string>> {
  if (created.length === 0 && updated.length === 0 && tasks.length === 0) return new Set();
  const transitions: Transition[] = [];
  const search: Array<{ uid: string; created: boolean; ids: string }> = [];
  const notes: Array<{ uid: string; created: boolean; first_seen_at: unknown; earliest: string; committed_since: unknown; idempotency_key: unknown }> = [];
  for (const c of created) {
    transitions.push(transitionOf(c.uid, true, null, c.state, 1));
    search.push({ uid: c.uid, created: true, ids: searchText(c.taskId, c.invocationId, c.state.idempotencyKey) });
    // Late data: a new invocation first seen in an hour the rollups may already have counted.
    notes.push({ uid: c.uid, created: true, first_seen_at: c.state.firstSeenAt, earliest: c.state.firstSeenAt, committed_since: null, idempotency_key: null });
  }
  for (const u of updated) {
    const b = u.before;
    if (b.status !== u.state.status || b.commit_state !== u.state.commitState) transitions.push(transitionOf(b.id, false, String(b.status), u.state, u.version));
    if (b.idempotency_key !== u.state.idempotencyKey) search.push({ uid: b.id, created: false, ids: searchText(b.task_id, b.invocation_id, u.state.idempotencyKey) });
    const firstSeen = String(b.first_seen_at);
    notes.push({
      uid: b.id,
      created: false,
      first_seen_at: firstSeen,
      earliest: Date.parse(firstSeen) <= Date.parse(u.state.firstSeenAt) ? firstSeen : u.state.firstSeenAt,
      committed_since: b.commit_state === "committed" ? b.status_since : null,
      idempotency_key: b.idempotency_key,
    });
  }
  const rows = await tx.query<{ created: string[]; updated: number }>(writeStatesStatement, [
    runtimeId,
    JSON.stringify(created.map((c) => ({ id: c.uid, invocation_id: c.invocationId, task_id: c.taskId, version: 1, ...stateOf(c.state) }))),
    JSON.stringify(updated.map((u) => ({ id: u.before.id, version: u.version, ...stateOf(u.state) }))),
    JSON.stringify(transitions),
    JSON.stringify(search),
    JSON.stringify(tasks.map((t) => ({ task_id: t.taskId, first: t.first, last: t.last }))),
    JSON.stringify(notes),
  ]);
  return new Set(rows[0]?.created ?? []);
}
