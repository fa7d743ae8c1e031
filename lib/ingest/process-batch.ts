import type { Db } from "../db/client";
import { sqlLiteral, type PreparedStatement, type ScriptTransaction, type SqlDriver } from "../db/driver";
import {
  deriveAll,
  derivedPayload,
  foldInputQueries,
  toFoldInputs,
  updateDerivedQuery,
  type ActionRow,
  type RecordRow,
} from "../domain/invocation-store";
import { recordError, type ErrorEnvelope } from "../api/errors";
import { prepareRecord, type PreparedRecord } from "./record";

// Ingests a batch of records for one runtime in one transaction: every
// accepted record is committed before the caller answers, a rejected one
// stores nothing, a repeated event changes nothing.
//
// The transaction takes two round trips, whatever the batch size: the first
// locks the invocations, stores the attempts and reads what their state folds
// from; the second writes the folded state and the tasks, and commits. Each
// trip is one simple query of several statements, so arguments travel as SQL
// literals (`sqlLiteral`); the statements are prepared once per connection, so
// PostgreSQL does not plan them again for every request. Under READ COMMITTED
// every statement takes a new snapshot: the ones after the lock see whatever a
// concurrent batch committed before releasing it.

export type RecordResult = {
  index: number;
  status: "accepted" | "duplicate" | "rejected";
  event_id: string | null;
  invocation_id: string | null;
  error?: ErrorEnvelope;
};

export type IngestResult = { results: RecordResult[]; accepted: number; duplicates: number; rejected: number };

export type RuntimeRef = { id: string; name: string };

// A record travels to PostgreSQL as a JSON array, in the order of these
// columns: with the column names repeated in every object, a batch's payload
// would be twice the size, and PostgreSQL would sort every object's keys.
const recordColumns = [
  ["pos", "int"], // the invocation's place in the lock order
  ["ord", "int"], // the record's place in the batch
  ["invocation_id", "text"],
  ["task_id", "text"],
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
] as const;

function recordRow(p: PreparedRecord, pos: number, ord: number): unknown[] {
  const n = p.normalized;
  return [
    pos,
    ord,
    p.invocationId,
    p.taskId,
    p.eventKey,
    p.eventId,
    p.attemptId,
    p.attemptNo,
    p.phase,
    p.at,
    p.tool,
    p.effectClass,
    p.idempotencyKey,
    p.budgetLeftS === null ? null : Math.round(p.budgetLeftS),
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
  ];
}

/** The records in `param` (a jsonb array of `recordRow`s) as a relation with `recordColumns`. */
const recordsIn = (param: string) =>
  `(SELECT ${recordColumns
    .map(([name, type], i) => (type === "jsonb" ? `r -> ${i}` : type === "text" ? `r ->> ${i}` : `(r ->> ${i})::${type}`) + ` AS ${name}`)
    .join(", ")} FROM jsonb_array_elements(${param}) AS r)`;
const attemptNames = recordColumns.slice(4).map(([name]) => name);

// Prepared statements keep the plan they were first given, possibly while the
// tables were small, when every plan costs about the same. So each statement
// is written such that a single index can serve each lookup: invocations are
// found by primary key or through ON CONFLICT's arbiter, never by
// (runtime_id, invocation_id), which two other indexes start like. And
// sequential scans are disabled in this transaction: on a table that was
// small at planning time, one would look cheapest and stay in the plan.
// A statement that waits more than 30 s (for a lock) gives up, as the Prisma
// transaction this replaced did, instead of holding its connection forever.
const SETTINGS = ["SET LOCAL enable_seqscan = off", "SET LOCAL statement_timeout = '30s'"];

// $1 runtime id, $2 the records (`recordRow`).
// Locks (or creates) every invocation with a record not stored before, in `pos`
// order, so concurrent batches touching the same invocations queue up instead
// of deadlocking; a record already stored is a duplicate, and the skeleton of
// a new invocation comes from its first new record in the batch. Then stores
// the attempts: all locks are taken first, because the aggregate in `lock_map`
// emits nothing before it has read every locked row. A record whose invocation
// is not locked was stored before; so, with a conflict, was one that a
// concurrent batch stored meanwhile.
const lockAndStore: PreparedStatement = {
  name: "settle_ingest_lock_and_store",
  params: ["uuid", "jsonb"],
  text: `WITH locked AS (
           INSERT INTO invocations (id, runtime_id, invocation_id, task_id, tool, status, commit_state, next_action, version,
                                    first_seen_at, last_attempt_at, status_since)
           SELECT gen_random_uuid(), $1, f.invocation_id, f.task_id, f.tool, 'pending', 'unknown', 'none', 0, f.at, f.at, f.at
             FROM (SELECT DISTINCT ON (k.invocation_id) k.*
                     FROM ${recordsIn("$2")} AS k
                    WHERE (SELECT true FROM attempts WHERE runtime_id = $1 AND event_key = k.event_key) IS NULL
                    ORDER BY k.invocation_id, k.ord) AS f
            ORDER BY f.pos
           ON CONFLICT (runtime_id, invocation_id) DO UPDATE SET updated_at = invocations.updated_at
           RETURNING id, invocation_id, version),
         lock_map AS (SELECT jsonb_object_agg(invocation_id, jsonb_build_array(id, version)) AS m FROM locked)
       INSERT INTO attempts (id, runtime_id, invocation_uid, seq, ${attemptNames.join(", ")})
       SELECT gen_random_uuid(), $1, (lock_map.m -> x.invocation_id ->> 0)::uuid, (lock_map.m -> x.invocation_id ->> 1)::int + 1,
              ${attemptNames.map((name) => `x.${name}`).join(", ")}
         FROM lock_map, ${recordsIn("$2")} AS x
        WHERE lock_map.m ? x.invocation_id
        ORDER BY x.ord
       ON CONFLICT (runtime_id, event_key) DO NOTHING
       RETURNING event_key, invocation_uid::text, seq`,
};

// $1 runtime id, $2 the batch's event keys: what the invocations of its records fold from.
// A statement after the one that locked them, so with a snapshot that sees all they hold.
const [foldRecordsQuery, foldActionsQuery] = foldInputQueries(
  `= ANY(ARRAY(SELECT (SELECT invocation_uid FROM attempts WHERE runtime_id = $1 AND event_key = v)
                 FROM jsonb_array_elements_text($2) AS v))`,
);
const loadFoldRecords: PreparedStatement = { name: "settle_ingest_fold_records", params: ["uuid", "jsonb"], text: foldRecordsQuery };
const loadFoldActions: PreparedStatement = { name: "settle_ingest_fold_actions", params: ["uuid", "jsonb"], text: foldActionsQuery };

const writeState: PreparedStatement = { name: "settle_ingest_state", params: ["jsonb"], text: updateDerivedQuery("$1") };

// $1 runtime id, $2 [{task_id, first, last}].
const upsertTasks: PreparedStatement = {
  name: "settle_ingest_tasks",
  params: ["uuid", "jsonb"],
  text: `INSERT INTO tasks (runtime_id, task_id, first_seen_at, last_seen_at)
         SELECT $1, x.task_id, x.first, x.last
           FROM jsonb_to_recordset($2) AS x(task_id text, first timestamptz, last timestamptz)
          ORDER BY x.task_id
         ON CONFLICT (runtime_id, task_id) DO UPDATE
           SET first_seen_at = LEAST(tasks.first_seen_at, excluded.first_seen_at),
               last_seen_at = GREATEST(tasks.last_seen_at, excluded.last_seen_at)`,
};

const json = (value: unknown) => sqlLiteral(JSON.stringify(value));

type Inserted = { event_key: string; invocation_uid: string; seq: number };

/**
 * Stores records inside an open script transaction, in two round trips; with
 * `commit` the second one also commits. The guard (lib/domain/guard.ts) runs
 * it after its own check, so a guarded intent is stored exactly like a posted one.
 * Returns the event keys stored now (the others were stored before).
 */
export async function storeRecordsIn(
  tx: ScriptTransaction,
  runtimeId: string,
  records: PreparedRecord[],
  { commit }: { commit: boolean },
): Promise<Set<string>> {
  const runtime = sqlLiteral(runtimeId);
  const order = [...new Set(records.map((p) => p.invocationId))].sort((a, b) => (a < b ? -1 : 1));
  const position = new Map(order.map((id, i) => [id, i]));
  const rows = records.map((p, ord) => recordRow(p, position.get(p.invocationId)!, ord));
  const eventKeys = json(records.map((p) => p.eventKey));

  const [, , inserted, foldRecords, foldActions] = (await tx.run([
    ...SETTINGS,
    { prepared: lockAndStore, args: [runtime, json(rows)] },
    { prepared: loadFoldRecords, args: [runtime, eventKeys] },
    { prepared: loadFoldActions, args: [runtime, eventKeys] },
  ])) as [unknown[], unknown[], Inserted[], RecordRow[], ActionRow[]];
  const insertedKeys = new Set(inserted.map((r) => r.event_key));
  if (inserted.length === 0) return insertedKeys;

  // An attempt's seq is its invocation's version before this batch, plus one: the version it has after.
  const versionAfter = new Map(inserted.map((r) => [r.invocation_uid, r.seq]));
  const derived = deriveAll(toFoldInputs(versionAfter.keys(), foldRecords, foldActions));
  const states = [...derived].map(([uid, d]) => ({ uid, version: versionAfter.get(uid)!, derived: d }));

  const tasks = new Map<string, { task_id: string; first: string; last: string }>();
  for (const p of records) {
    if (!insertedKeys.has(p.eventKey)) continue;
    const t = tasks.get(p.taskId) ?? { task_id: p.taskId, first: p.at, last: p.at };
    if (p.at < t.first) t.first = p.at;
    if (p.at > t.last) t.last = p.at;
    tasks.set(p.taskId, t);
  }
  const taskRows = [...tasks.values()].sort((a, b) => (a.task_id < b.task_id ? -1 : 1));
  await tx.run(
    [
      { prepared: writeState, args: [sqlLiteral(derivedPayload(states))] },
      { prepared: upsertTasks, args: [runtime, json(taskRows)] },
    ],
    { commit },
  );
  return insertedKeys;
}

function storeBatch(driver: SqlDriver, runtimeId: string, records: PreparedRecord[]): Promise<Set<string>> {
  return driver.scriptTransaction((tx) => storeRecordsIn(tx, runtimeId, records, { commit: true }));
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
  const fresh: Array<{ prepared: PreparedRecord; result: RecordResult }> = [];
  const seenInBatch = new Set<string>();
  raw.forEach((record, index) => {
    const lineError = unparsable.get(index);
    const prepared = lineError
      ? { code: "INVALID_JSON", message: `record ${index + 1} of this request (a non-blank NDJSON line) is not valid JSON (${lineError}).` }
      : prepareRecord(record, receivedAt);
    if ("code" in prepared) {
      const given = (record as { event_id?: unknown } | null)?.event_id;
      const eventId = typeof given === "string" ? given : null;
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
    };
    results.push(result);
    if (!duplicate) fresh.push({ prepared, result });
  });

  if (fresh.length > 0) {
    const stored = await storeBatch(db.driver, runtime.id, fresh.map((f) => f.prepared));
    // Stored before, or by a concurrent request in the meantime: either way a duplicate.
    for (const f of fresh) if (!stored.has(f.prepared.eventKey)) f.result.status = "duplicate";
  }

  return {
    results,
    accepted: results.filter((r) => r.status === "accepted").length,
    duplicates: results.filter((r) => r.status === "duplicate").length,
    rejected: results.filter((r) => r.status === "rejected").length,
  };
}
