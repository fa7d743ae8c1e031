import type { Db } from "../db/client";
import { deriveAll, loadFoldInputs, writeDerived, type Sql } from "../domain/invocation-store";
import { recordError, type ErrorEnvelope } from "../api/errors";
import { prepareRecord, type PreparedRecord } from "./record";

// Ingests a batch of records for one runtime in one transaction: every
// accepted record is committed before the caller answers, a rejected one
// stores nothing, a repeated event changes nothing.

export type RecordResult = {
  index: number;
  status: "accepted" | "duplicate" | "rejected";
  event_id: string | null;
  invocation_id: string | null;
  error?: ErrorEnvelope;
};

export type IngestResult = { results: RecordResult[]; accepted: number; duplicates: number; rejected: number };

export type RuntimeRef = { id: string; name: string };

function attemptRow(p: PreparedRecord, invocationUid: string, seq: number) {
  const n = p.normalized;
  return {
    invocation_uid: invocationUid,
    event_key: p.eventKey,
    event_id: p.eventId,
    seq,
    attempt_id: p.attemptId,
    attempt_no: p.attemptNo,
    phase: p.phase,
    at: p.at,
    tool: p.tool,
    effect_class: p.effectClass,
    idempotency_key: p.idempotencyKey,
    budget_left_s: p.budgetLeftS === null ? null : Math.round(p.budgetLeftS),
    args_digest: p.argsDigest,
    dialect: n.dialect,
    wrapper_dialect: n.wrapper_dialect,
    outcome: n.outcome,
    commit_state: n.commit_state,
    code: n.code,
    category: n.category,
    retry_directive: n.retry.directive,
    not_before: n.retry.not_before,
    max_attempts_remaining: n.retry.max_attempts_remaining,
    next_action: n.next_action,
    dispatch_stage: n.dispatch_stage,
    probe_result: p.probeResult,
    safe_details: n.safe_details,
    agent_message: n.agent_message,
    user_message: n.user_message,
    items: n.items,
    envelope: p.envelope,
  };
}

const attemptColumns = `invocation_uid uuid, event_key text, event_id text, seq int, attempt_id text, attempt_no int,
  phase text, at timestamptz, tool text, effect_class text, idempotency_key text, budget_left_s int, args_digest text,
  dialect text, wrapper_dialect text, outcome text, commit_state text, code text, category text, retry_directive text,
  not_before timestamptz, max_attempts_remaining int, next_action text, dispatch_stage text, probe_result text,
  safe_details jsonb, agent_message text, user_message text, items jsonb, envelope jsonb`;
const attemptNames = attemptColumns
  .split(",")
  .map((c) => c.trim().split(/\s+/)[0])
  .join(", ");

async function storeBatch(sql: Sql, runtimeId: string, fresh: PreparedRecord[]): Promise<Set<string>> {
  // Lock (or create) each invocation first, in a fixed order, so concurrent
  // batches touching the same invocations queue up instead of deadlocking.
  const firstOf = new Map<string, PreparedRecord>();
  for (const p of fresh) if (!firstOf.has(p.invocationId)) firstOf.set(p.invocationId, p);
  const skeletons = [...firstOf.values()]
    .sort((a, b) => (a.invocationId < b.invocationId ? -1 : 1))
    .map((p) => ({ invocation_id: p.invocationId, task_id: p.taskId, tool: p.tool, at: p.at }));
  const locked = await sql.$queryRawUnsafe<Array<{ id: string; invocation_id: string; version: number }>>(
    `INSERT INTO invocations (id, runtime_id, invocation_id, task_id, tool, status, commit_state, next_action, version,
                              first_seen_at, last_attempt_at, status_since)
     SELECT gen_random_uuid(), $1::uuid, x.invocation_id, x.task_id, x.tool, 'pending', 'unknown', 'none', 0, x.at, x.at, x.at
       FROM jsonb_to_recordset($2::jsonb) AS x(invocation_id text, task_id text, tool text, at timestamptz)
     ON CONFLICT (runtime_id, invocation_id) DO UPDATE SET updated_at = invocations.updated_at
     RETURNING id::text, invocation_id, version`,
    runtimeId,
    JSON.stringify(skeletons),
  );
  const byInvocation = new Map(locked.map((r) => [r.invocation_id, r]));

  const rows = fresh.map((p) => {
    const inv = byInvocation.get(p.invocationId)!;
    return attemptRow(p, inv.id, inv.version + 1);
  });
  const inserted = await sql.$queryRawUnsafe<Array<{ event_key: string; invocation_uid: string }>>(
    `INSERT INTO attempts (id, runtime_id, ${attemptNames})
     SELECT gen_random_uuid(), $1::uuid, ${attemptNames} FROM jsonb_to_recordset($2::jsonb) AS x(${attemptColumns})
     ON CONFLICT (runtime_id, event_key) DO NOTHING
     RETURNING event_key, invocation_uid::text`,
    runtimeId,
    JSON.stringify(rows),
  );

  const changed = [...new Set(inserted.map((r) => r.invocation_uid))];
  const derived = deriveAll(await loadFoldInputs(sql, changed));
  const versionOf = new Map(locked.map((r) => [r.id, r.version]));
  await writeDerived(
    sql,
    [...derived].map(([uid, d]) => ({ uid, version: (versionOf.get(uid) ?? 0) + 1, derived: d })),
  );

  const tasks = new Map<string, { task_id: string; first: string; last: string }>();
  const insertedKeys = new Set(inserted.map((r) => r.event_key));
  for (const p of fresh) {
    if (!insertedKeys.has(p.eventKey)) continue;
    const t = tasks.get(p.taskId) ?? { task_id: p.taskId, first: p.at, last: p.at };
    if (p.at < t.first) t.first = p.at;
    if (p.at > t.last) t.last = p.at;
    tasks.set(p.taskId, t);
  }
  if (tasks.size > 0) {
    await sql.$queryRawUnsafe(
      `INSERT INTO tasks (runtime_id, task_id, first_seen_at, last_seen_at)
       SELECT $1::uuid, x.task_id, x.first, x.last
         FROM jsonb_to_recordset($2::jsonb) AS x(task_id text, first timestamptz, last timestamptz) ORDER BY x.task_id
       ON CONFLICT (runtime_id, task_id) DO UPDATE
         SET first_seen_at = LEAST(tasks.first_seen_at, excluded.first_seen_at),
             last_seen_at = GREATEST(tasks.last_seen_at, excluded.last_seen_at)`,
      runtimeId,
      JSON.stringify([...tasks.values()].sort((a, b) => (a.task_id < b.task_id ? -1 : 1))),
    );
  }
  return insertedKeys;
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
      ? { code: "INVALID_JSON", message: `line ${index + 1} is not valid JSON (${lineError}).` }
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
    const known = await db.prisma.$queryRawUnsafe<Array<{ event_key: string }>>(
      `SELECT event_key FROM attempts WHERE runtime_id = $1::uuid AND event_key = ANY($2::text[])`,
      runtime.id,
      fresh.map((f) => f.prepared.eventKey),
    );
    const knownKeys = new Set(known.map((k) => k.event_key));
    const toStore = fresh.filter((f) => !knownKeys.has(f.prepared.eventKey)).map((f) => f.prepared);
    const stored =
      toStore.length > 0
        ? await db.prisma.$transaction((tx) => storeBatch(tx, runtime.id, toStore), { timeout: 30_000, maxWait: 10_000 })
        : new Set<string>();
    // Known before, or stored by a concurrent request in the meantime: either way a duplicate.
    for (const f of fresh) if (!stored.has(f.prepared.eventKey)) f.result.status = "duplicate";
  }

  return {
    results,
    accepted: results.filter((r) => r.status === "accepted").length,
    duplicates: results.filter((r) => r.status === "duplicate").length,
    rejected: results.filter((r) => r.status === "rejected").length,
  };
}
