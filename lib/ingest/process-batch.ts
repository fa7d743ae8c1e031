import type { Db } from "../db/client";
import type { Tx } from "../db/driver";
import { isDataError, isRetryableConflict, sqlState } from "../db/errors";
import { timeOrderedUuid } from "../db/uuid";
import { foldInvocation, resumeFold, type FoldRecord } from "../domain/fold";
import {
  foldConfig,
  foldFromHistory,
  INVOCATION_COLUMNS,
  snapshotOf,
  writeStates,
  type CreatedState,
  type InvocationRow,
  type TaskSpan,
  type UpdatedState,
} from "../domain/invocation-store";
import { recordError, type ErrorEnvelope } from "../api/errors";
import type { IgnoredHint } from "./limits";
import { prepareRecord, type PreparedRecord, type RecordProblem } from "./record";
import { cleanText } from "./redact";

// Ingests a batch of records for one runtime: every accepted record is
// committed before the caller answers, a rejected one stores nothing, a
// repeated event changes nothing, and no record can take its neighbours down.
//
// Each record is validated and prepared on its own first; one that cannot be
// is rejected alone. The rest are stored in one transaction of two
// statements with bound parameters (decision 012): the first locks the
// batch's invocations and stores the attempts, the second writes the states
// the fold makes of them. Should PostgreSQL still refuse a value, the batch
// is split and stored in halves until only the record it refuses is left.

export type RecordResult = {
  index: number;
  status: "accepted" | "duplicate" | "rejected";
  event_id: string | null;
  invocation_id: string | null;
  /** Hints in the envelope that Settle left out of its reading (the stored envelope keeps them). */
  ignored?: IgnoredHint[];
  error?: ErrorEnvelope;
};

export type IngestResult = { results: RecordResult[]; accepted: number; duplicates: number; rejected: number };

export type RuntimeRef = { id: string; name: string };

/** An attempt's columns, in the order its row travels in (a JSON array per record, not an object: half the bytes). */
const ATTEMPT_COLUMNS = [
  ["event_key", "text"],
  ["event_id", "text"],
  ["attempt_id", "text"],
  ["attempt_no", "int"],
  ["phase", "text"],
  ["at", "timestamptz"],
  ["tool", "text"],
  ["effect_class", "text"],
  ["idempotency_key", "text"],
  ["budget_left_s", "int"],
  ["args_digest", "text"],
  ["dialect", "text"],
  ["wrapper_dialect", "text"],
  ["outcome", "text"],
  ["commit_state", "text"],
  ["code", "text"],
  ["category", "text"],
  ["retry_directive", "text"],
  ["not_before", "timestamptz"],
  ["max_attempts_remaining", "int"],
  ["next_action", "text"],
  ["dispatch_stage", "text"],
  ["probe_result", "text"],
  ["safe_details", "jsonb"],
  ["agent_message", "text"],
  ["user_message", "text"],
  ["items", "jsonb"],
  ["envelope", "jsonb"],
  ["ignored", "jsonb"],
] as const;

function attemptRow(p: PreparedRecord): unknown[] {
  const n = p.normalized;
  return [
    p.invocationId,
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
  ];
}

const column = ([name, type]: readonly [string, string], i: number) =>
  `${type === "jsonb" ? `nullif(r -> ${i}, 'null'::jsonb)` : type === "text" ? `r ->> ${i}` : `(r ->> ${i})::${type}`} AS ${name}`;
const ATTEMPT_NAMES = ATTEMPT_COLUMNS.map(([name]) => name);

// $1 runtime, $2 [[invocation id, uid if it is new]] in invocation id order, $3 the records (`attemptRow`).
// Locks the batch's invocations in id order, so concurrent batches queue up
// instead of deadlocking, then stores the attempts (in event key order, for
// the same reason): `lock_map` is an aggregate, which emits nothing before it
// has read, and so locked, every row. A record already stored is left out
// (ON CONFLICT), also when a concurrent batch stored it meanwhile. Answers,
// per invocation with a record stored now, its row as locked (none if it is
// new) and the event keys stored.
const lockAndStore = {
  name: "settle_ingest_lock_and_store",
  text: `WITH batch AS (SELECT b ->> 0 AS invocation_id, (b ->> 1)::uuid AS new_uid FROM jsonb_array_elements($2::jsonb) AS b),
    incoming AS (SELECT r ->> 0 AS invocation_id, ${ATTEMPT_COLUMNS.map((c, i) => column(c, i + 1)).join(", ")}
                   FROM jsonb_array_elements($3::jsonb) AS r),
    locked AS (
      SELECT ${INVOCATION_COLUMNS} FROM invocations
       WHERE runtime_id = $1::uuid AND invocation_id = ANY(ARRAY(SELECT invocation_id FROM batch))
       ORDER BY invocation_id
       FOR UPDATE),
    lock_map AS (SELECT coalesce(jsonb_object_agg(invocation_id, jsonb_build_array(id, version)), '{}'::jsonb) AS m FROM locked),
    stored AS (
      INSERT INTO attempts (runtime_id, invocation_uid, seq, ${ATTEMPT_NAMES.join(", ")})
      SELECT $1::uuid, coalesce((lock_map.m -> k.invocation_id ->> 0)::uuid, b.new_uid), coalesce((lock_map.m -> k.invocation_id ->> 1)::int, 0) + 1,
             ${ATTEMPT_NAMES.map((name) => `k.${name}`).join(", ")}
        FROM lock_map, incoming AS k JOIN batch AS b USING (invocation_id)
       ORDER BY k.event_key
      ON CONFLICT (runtime_id, event_key) DO NOTHING
      RETURNING invocation_uid, event_key)
    SELECT b.invocation_id, b.new_uid::text AS new_uid, s.keys, l.id, l.task_id, l.version, ${INVOCATION_COLUMNS.split(", ").slice(4).map((c) => `l.${c}`).join(", ")}
      FROM batch AS b
      LEFT JOIN locked AS l USING (invocation_id)
      JOIN (SELECT invocation_uid, array_agg(event_key) AS keys FROM stored GROUP BY invocation_uid) AS s
        ON s.invocation_uid = coalesce(l.id::uuid, b.new_uid)`,
};

type StoredRow = Omit<InvocationRow, "id" | "invocation_id" | "task_id" | "version"> & {
  invocation_id: string;
  new_uid: string;
  keys: string[];
  id: string | null;
  task_id: string | null;
  version: number | null;
};

// $1 runtime, $2 [[invocation id, uid of the row that was not created]]: a
// concurrent batch created these invocations first; the attempts stored under
// the uid this batch had picked move to theirs, after everything it stored.
const adoptAttempts = {
  name: "settle_ingest_adopt",
  text: `WITH lost AS (SELECT b ->> 0 AS invocation_id, (b ->> 1)::uuid AS uid FROM jsonb_array_elements($2::jsonb) AS b),
    winners AS (
      SELECT ${INVOCATION_COLUMNS} FROM invocations
       WHERE runtime_id = $1::uuid AND invocation_id = ANY(ARRAY(SELECT invocation_id FROM lost))
       ORDER BY invocation_id
       FOR UPDATE),
    moved AS (
      UPDATE attempts AS a SET invocation_uid = w.id::uuid, seq = w.version + 1
        FROM lost JOIN winners AS w USING (invocation_id)
       WHERE a.runtime_id = $1::uuid AND a.invocation_uid = lost.uid
      RETURNING a.event_key)
    SELECT w.*, (SELECT count(*) FROM moved)::int AS moved FROM winners AS w`,
};

/** What the fold reads of a prepared record; the same as of the row it is stored as (`toFoldRecord`). */
function foldRecordOf(p: PreparedRecord, seq: number): FoldRecord {
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

/**
 * Stores records inside an open transaction: the attempts, then their
 * invocations' states. The guard (lib/domain/guard.ts) runs it after its own
 * check, so a guarded intent is stored exactly like a posted one. Returns the
 * event keys stored now (the others were stored before).
 */
export async function storeRecordsIn(tx: Tx, runtimeId: string, records: PreparedRecord[]): Promise<Set<string>> {
  const order = [...new Set(records.map((p) => p.invocationId))].sort(byText);
  const rows = await tx.query<StoredRow>(lockAndStore, [
    runtimeId,
    JSON.stringify(order.map((id) => [id, timeOrderedUuid()])),
    JSON.stringify(records.map(attemptRow)),
  ]);
  const byInvocation = new Map<string, PreparedRecord[]>();
  for (const p of records) byInvocation.set(p.invocationId, [...(byInvocation.get(p.invocationId) ?? []), p]);

  const inserted = new Set<string>();
  const created: CreatedState[] = [];
  const updated: UpdatedState[] = [];
  const refold: InvocationRow[] = [];
  const config = foldConfig();
  for (const row of rows) {
    const keys = new Set(row.keys);
    for (const k of keys) inserted.add(k);
    const fresh = byInvocation.get(row.invocation_id)!.filter((p) => keys.has(p.eventKey));
    if (row.id === null) {
      const state = foldInvocation(fresh.map((p) => foldRecordOf(p, 1)), [], config);
      created.push({ uid: row.new_uid, invocationId: row.invocation_id, taskId: fresh[0]!.taskId, state });
      continue;
    }
    const locked = row as unknown as InvocationRow;
    const version = locked.version + 1;
    const snapshot = snapshotOf(locked);
    const resumed = snapshot && resumeFold(snapshot, fresh.map((p) => foldRecordOf(p, version)), config);
    if (resumed) updated.push({ before: locked, version, state: resumed });
    else refold.push(locked);
  }
  // A late record that belongs before the stored ones, or a row from before the fold was kept: the whole history.
  const folded = await foldFromHistory(tx, runtimeId, refold.map((r) => r.id));
  for (const row of refold) updated.push({ before: row, version: row.version + 1, state: folded.get(row.id)! });

  const createdIds = await writeStates(tx, runtimeId, created, updated, taskSpans(records.filter((p) => inserted.has(p.eventKey))));
  const lost = created.filter((c) => !createdIds.has(c.uid));
  if (lost.length > 0) await adopt(tx, runtimeId, lost);
  return inserted;
}

/** New invocations a concurrent batch created first: its row gets this batch's attempts, folded whole. */
async function adopt(tx: Tx, runtimeId: string, lost: CreatedState[]): Promise<void> {
  const winners = await tx.query<InvocationRow>(adoptAttempts, [
    runtimeId,
    JSON.stringify([...lost].sort((a, b) => byText(a.invocationId, b.invocationId)).map((c) => [c.invocationId, c.uid])),
  ]);
  const folded = await foldFromHistory(tx, runtimeId, winners.map((w) => w.id));
  await writeStates(tx, runtimeId, [], winners.map((w) => ({ before: w, version: w.version + 1, state: folded.get(w.id)! })));
}

const INGEST_SETTINGS = [
  // A statement that waits more than 30 s (for a lock) gives up instead of holding its connection.
  "statement_timeout = '30s'",
  // Plans are kept per connection from their first runs, maybe while the tables were small, when a
  // sequential scan looks cheapest; every lookup here is by a key, so never scan.
  "enable_seqscan = off",
];

/** Runs a transaction again after a deadlock or serialization failure (a few times, with jitter). */
async function withConflictRetries<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (!isRetryableConflict(error) || attempt >= 4) throw error;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
    }
  }
}

type Pending = { prepared: PreparedRecord; result: RecordResult };

/**
 * Stores records in one transaction; when PostgreSQL refuses a value (a data
 * error), in halves, until the one record it refuses is rejected alone.
 */
async function storeIsolated(db: Db, runtimeId: string, pending: Pending[]): Promise<void> {
  try {
    const stored = await withConflictRetries(() =>
      db.driver.transaction((tx) => storeRecordsIn(tx, runtimeId, pending.map((p) => p.prepared)), { settings: INGEST_SETTINGS }),
    );
    // Stored before, or by a concurrent request in the meantime: either way a duplicate.
    for (const p of pending) if (!stored.has(p.prepared.eventKey)) p.result.status = "duplicate";
  } catch (error) {
    if (!isDataError(error)) throw error;
    if (pending.length === 1) {
      const [only] = pending;
      const state = sqlState(error);
      const reason = error instanceof Error ? error.message : "refused";
      Object.assign(only!.result, {
        status: "rejected",
        error: recordError({ code: "STORAGE_REFUSED", message: `The database refused a value of this record (SQLSTATE ${state}: ${reason}).` }, only!.result.event_id ?? `record ${only!.result.index}`),
      });
      return;
    }
    const half = Math.ceil(pending.length / 2);
    await storeIsolated(db, runtimeId, pending.slice(0, half));
    await storeIsolated(db, runtimeId, pending.slice(half));
  }
}

function prepareSafely(record: unknown, receivedAt: Date): PreparedRecord | RecordProblem {
  try {
    return prepareRecord(record, receivedAt);
  } catch (error) {
    // Whatever went wrong reading one record is that record's problem only.
    console.error("[settle] a record could not be prepared:", error);
    return { code: "INVALID_RECORD", message: "Settle could not read this record." };
  }
}

/** `unparsable` holds NDJSON lines that were not JSON: each rejects its own record only. */
export async function ingestRecords(
  db: Db,
  runtime: RuntimeRef,
  raw: unknown[],
  receivedAt = new Date(),
  unparsable: Map<number, string> = new Map(),
): Promise<IngestResult> {
  const results: RecordResult[] = [];
  const pending: Pending[] = [];
  const seenInBatch = new Set<string>();
  raw.forEach((record, index) => {
    const lineError = unparsable.get(index);
    const prepared = lineError
      ? { code: "INVALID_JSON", message: `record ${index + 1} of this request (a non-blank NDJSON line) is not valid JSON (${lineError}).` }
      : prepareSafely(record, receivedAt);
    if ("code" in prepared) {
      const given = (record as { event_id?: unknown } | null)?.event_id;
      const eventId = typeof given === "string" ? cleanText(given) : null;
      results.push({ index, status: "rejected", event_id: eventId, invocation_id: null, error: recordError(prepared, eventId ?? `record ${index}`) });
      return;
    }
    const duplicate = seenInBatch.has(prepared.eventKey);
    seenInBatch.add(prepared.eventKey);
    const result: RecordResult = {
      index,
      status: duplicate ? "duplicate" : "accepted",
      event_id: prepared.eventId ?? prepared.eventKey,
      invocation_id: prepared.invocationId,
      ...(prepared.normalized.ignored ? { ignored: prepared.normalized.ignored } : {}),
    };
    results.push(result);
    if (!duplicate) pending.push({ prepared, result });
  });

  if (pending.length > 0) await storeIsolated(db, runtime.id, pending);

  return {
    results,
    accepted: results.filter((r) => r.status === "accepted").length,
    duplicates: results.filter((r) => r.status === "duplicate").length,
    rejected: results.filter((r) => r.status === "rejected").length,
  };
}
