import "server-only";
import type { SqlDriver, Tx } from "../db/driver";
import { statusFilterSql } from "../outcome/status";
import { askingStoredStatuses, verifiableStatuses, type VerifyConfig } from "../outcome/verification";
import { boundParams } from "../db/params";
import { likePatternOf } from "../catalog/effect-class";
import type { InvocationSqlRow } from "../invocations/sql-row";

// The SQL of verification requests: bound parameters only; the statuses that start one come from lib/outcome.

type Query = Pick<SqlDriver, "query"> | Tx;

export type RequestRow = {
  runtime_id: string;
  id: string;
  invocation_uid: string;
  attempt: number;
  state: string;
  tries: number;
  config: VerifyConfig;
  due_at: Date;
  leased_until: Date | null;
  leased_by: string | null;
  first_dispatched_at: Date;
  answers: StoredAnswer[];
};

export type StoredAnswer = {
  try: number;
  at: string;
  by: string;
  via: "api" | "webhook" | "settle";
  found: boolean | null;
  evidence: string | null;
  ref: string | null;
  reading: string;
};

/** The invocation a request is about, with what a verifier needs to look it up. */
export type AskedRow = Pick<
  InvocationSqlRow,
  | "runtime"
  | "invocation_id"
  | "task_id"
  | "tool"
  | "effect_class"
  | "idempotency_key"
  | "status"
  | "version"
  | "attempt_count"
> & { stall_at: Date | null };

export const REQUEST_COLUMNS = `v.runtime_id::text AS runtime_id, v.id::text AS id, v.invocation_uid::text AS invocation_uid, v.attempt,
  v.state, v.tries, v.config, v.due_at, v.leased_until, v.leased_by, v.first_dispatched_at, v.answers`;
const ASKED_COLUMNS = `r.name AS runtime, i.invocation_id, i.task_id, i.tool, i.effect_class, i.idempotency_key, i.status,
  i.stall_at, i.version, i.attempt_count`;

export async function selectRuntimesWithVerifiers(q: Query): Promise<string[]> {
  const rows = await q.query<{ runtime_id: string }>(
    `SELECT DISTINCT runtime_id::text AS runtime_id FROM tool_catalog_entries WHERE verify IS NOT NULL`,
    [],
  );
  return rows.map((r) => r.runtime_id);
}

export type CandidateRow = {
  uid: string;
  tool: string;
  status: string;
  status_since: Date;
  stall_at: Date | null;
  first_seen_at: Date;
  attempt_count: number;
};

/**
 * Unknown or stalled invocations of tools that may have a verifier, with no request for their latest attempt yet.
 * Exact tool names go through `invocations_verify_candidates_idx` (runtime, tool over the open calls); only a
 * catalog pattern with `*` needs LIKE, which reads every open call of the runtime.
 */
export async function selectCandidates(
  q: Query,
  runtimeId: string,
  catalogPatterns: string[],
  now: Date,
  limit: number,
): Promise<CandidateRow[]> {
  const { params: values, bind: param } = boundParams();
  const runtime = param(runtimeId);
  const exact = catalogPatterns.filter((p) => !p.includes("*"));
  const wild = catalogPatterns.filter((p) => p.includes("*")).map(likePatternOf);
  const tools = [
    ...(exact.length > 0 ? [`i.tool = ANY(${param(exact)}::text[])`] : []),
    ...(wild.length > 0 ? [`i.tool LIKE ANY(${param(wild)}::text[])`] : []),
  ].join(" OR ");
  const status = statusFilterSql(verifiableStatuses, "i.", () => param(now.toISOString()) + "::timestamptz", param);
  return q.query<CandidateRow>(
    `SELECT i.id::text AS uid, i.tool, i.status, i.status_since, i.stall_at, i.first_seen_at, i.attempt_count
       FROM invocations i
      WHERE i.runtime_id = ${runtime}::uuid AND ${status} AND (${tools || "false"})
        AND NOT EXISTS (SELECT 1 FROM verification_requests v WHERE v.runtime_id = i.runtime_id AND v.invocation_uid = i.id AND v.attempt = i.attempt_count)
      ORDER BY i.status_since LIMIT ${param(limit)}`,
    values,
  );
}

export type NewRequest = {
  uid: string;
  attempt: number;
  config: VerifyConfig;
  dueAt: Date;
  firstDispatchedAt: Date;
};

/** Schedules requests of one runtime in one statement; one already there for the attempt is left as it is. */
export async function insertRequests(
  q: Query,
  runtimeId: string,
  rows: readonly NewRequest[],
  now: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await q.query(
    `INSERT INTO verification_requests (runtime_id, id, invocation_uid, attempt, state, config, due_at, first_dispatched_at,
                                        created_at, updated_at)
     SELECT $1::uuid, gen_random_uuid(), r.uid, r.attempt, 'scheduled', r.config, r.due_at, r.first_dispatched_at,
            $7::timestamptz, $7::timestamptz
       FROM unnest($2::uuid[], $3::int[], $4::jsonb[], $5::timestamptz[], $6::timestamptz[])
            AS r(uid, attempt, config, due_at, first_dispatched_at)
     ON CONFLICT (runtime_id, invocation_uid, attempt) DO NOTHING
     RETURNING 1`,
    [
      runtimeId,
      rows.map((r) => r.uid),
      rows.map((r) => r.attempt),
      rows.map((r) => JSON.stringify(r.config)),
      rows.map((r) => r.dueAt.toISOString()),
      rows.map((r) => r.firstDispatchedAt.toISOString()),
      now.toISOString(),
    ],
  );
  return inserted.length;
}

/**
 * Scheduled requests now due, or open ones whose invocation may have moved on (someone settled it). An open one is
 * looked at only once no worker holds it: an answer being stored settles the invocation (its probe) a moment
 * before it moves its request on, and closing the request in between would lose the answer from it.
 */
export async function selectRequestsToReview(
  q: Query,
  now: Date,
  runtimeId: string | null,
  limit: number,
): Promise<Array<RequestRow & AskedRow>> {
  return q.query<RequestRow & AskedRow>(
    `SELECT ${REQUEST_COLUMNS}, ${ASKED_COLUMNS}
       FROM verification_requests v
       JOIN invocations i ON i.id = v.invocation_uid
       JOIN runtimes r ON r.id = v.runtime_id
      WHERE ($2::uuid IS NULL OR v.runtime_id = $2::uuid)
        AND ((v.state = 'scheduled' AND v.due_at <= $1::timestamptz)
          OR (v.state = 'open' AND (v.leased_until IS NULL OR v.leased_until <= $1::timestamptz)
              AND (NOT (i.status = ANY($4::text[])) OR i.attempt_count <> v.attempt
                   OR v.tries >= (v.config->>'max_tries')::int)))
      ORDER BY v.due_at LIMIT $3`,
    [now.toISOString(), runtimeId, limit, askingStoredStatuses],
  );
}

/** Moves a request on, if it is still where the caller saw it. */
export async function updateRequestState(
  q: Query,
  r: Pick<RequestRow, "runtime_id" | "id">,
  from: string,
  to: string,
  now: Date,
  answer?: StoredAnswer,
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE verification_requests
        SET state = $4, updated_at = $5::timestamptz,
            answers = CASE WHEN $6::jsonb IS NULL THEN answers ELSE answers || jsonb_build_array($6::jsonb) END
      WHERE runtime_id = $1::uuid AND id = $2::uuid AND state = $3 RETURNING 1`,
    [r.runtime_id, r.id, from, to, now.toISOString(), answer ? JSON.stringify(answer) : null],
  );
  return rows.length === 1;
}

/** Takes up to `limit` due requests of one runtime for `lease_s`, each try counted; two callers never get the same one. */
export async function leaseRequests(
  q: Query,
  runtimeId: string,
  leasedBy: string,
  now: Date,
  limit: number,
): Promise<Array<RequestRow & { was: string }>> {
  // A due `scheduled` request is taken too (and opened by its taker, lib/verify/lease.ts): a waiting worker gets
  // its ask when it is due, not after the next job tick opens it.
  return q.query<RequestRow & { was: string }>(
    `WITH picked AS (
       SELECT runtime_id, id, state AS was FROM verification_requests
        WHERE runtime_id = $1::uuid AND state IN ('scheduled', 'open') AND due_at <= $2::timestamptz
          AND (leased_until IS NULL OR leased_until <= $2::timestamptz)
          AND tries < (config->>'max_tries')::int
        ORDER BY due_at LIMIT $4
        FOR UPDATE SKIP LOCKED)
     UPDATE verification_requests v
        SET tries = v.tries + 1, leased_by = $3, updated_at = $2::timestamptz, state = 'open',
            leased_until = $2::timestamptz + make_interval(secs => (v.config->>'lease_s')::int),
            due_at = $2::timestamptz + make_interval(secs => (v.config->>'every_s')::int)
       FROM picked WHERE v.runtime_id = picked.runtime_id AND v.id = picked.id
     RETURNING ${REQUEST_COLUMNS}, picked.was`,
    [runtimeId, now.toISOString(), leasedBy, limit],
  );
}

export async function selectAsked(
  q: Query,
  uids: string[],
): Promise<Map<string, AskedRow & { first_arguments: unknown }>> {
  if (uids.length === 0) return new Map();
  const rows = await q.query<AskedRow & { uid: string; first_arguments: unknown }>(
    `SELECT i.id::text AS uid, ${ASKED_COLUMNS},
            (SELECT a.arguments FROM attempts a WHERE a.runtime_id = i.runtime_id AND a.invocation_uid = i.id AND a.arguments IS NOT NULL
              ORDER BY a.at DESC LIMIT 1) AS first_arguments
       FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
      WHERE i.id = ANY($1::uuid[])`,
    [uids],
    // The worker looks the effect up by these arguments: every digit of a long integer kept (lib/json).
    { exactJson: true },
  );
  return new Map(rows.map((r) => [r.uid, r]));
}

/** Requests of this runtime by id, with the invocations they ask about; another runtime's are not there. */
export async function selectRequests(
  q: Query,
  runtimeId: string,
  ids: string[],
): Promise<Map<string, RequestRow & AskedRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.query<RequestRow & AskedRow>(
    `SELECT ${REQUEST_COLUMNS}, ${ASKED_COLUMNS}
       FROM verification_requests v
       JOIN invocations i ON i.id = v.invocation_uid
       JOIN runtimes r ON r.id = v.runtime_id
      WHERE v.runtime_id = $1::uuid AND v.id = ANY($2::uuid[])`,
    [runtimeId, ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

export type RequestMove = { id: string; from: string; to: string; answer: StoredAnswer };

/** Moves requests of one runtime on in one statement, each only if it is still where the caller saw it. */
export async function moveRequests(
  q: Query,
  runtimeId: string,
  moves: readonly RequestMove[],
  now: Date,
): Promise<number> {
  if (moves.length === 0) return 0;
  const rows = await q.query(
    `UPDATE verification_requests v
        SET state = m.next, updated_at = $2::timestamptz, answers = v.answers || jsonb_build_array(m.answer)
       FROM unnest($3::uuid[], $4::text[], $5::text[], $6::jsonb[]) AS m(id, was, next, answer)
      WHERE v.runtime_id = $1::uuid AND v.id = m.id AND v.state = m.was RETURNING 1`,
    [
      runtimeId,
      now.toISOString(),
      moves.map((m) => m.id),
      moves.map((m) => m.from),
      moves.map((m) => m.to),
      moves.map((m) => JSON.stringify(m.answer)),
    ],
  );
  return rows.length;
}

/** After an answer that settles nothing: asked again at `dueAt`, the lease given back; false if it moved meanwhile. */
export async function askAgain(
  q: Query,
  r: RequestRow,
  dueAt: Date,
  answer: StoredAnswer,
  now: Date,
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE verification_requests
        SET due_at = $3::timestamptz, leased_until = NULL, updated_at = $4::timestamptz,
            answers = answers || jsonb_build_array($5::jsonb)
      WHERE runtime_id = $1::uuid AND id = $2::uuid AND state = 'open' AND tries = $6 RETURNING 1`,
    [r.runtime_id, r.id, dueAt.toISOString(), now.toISOString(), JSON.stringify(answer), r.tries],
  );
  return rows.length === 1;
}

/** The newest request about an invocation a caller may see (a runtime: its own only), by its public id. */
export async function selectRequestOf(
  q: Query,
  invocationId: string,
  scope: { runtimeId?: string; runtime?: string },
): Promise<(RequestRow & { runtime: string }) | null> {
  const [row] = await q.query<RequestRow & { runtime: string }>(
    `SELECT ${REQUEST_COLUMNS}, r.name AS runtime
       FROM verification_requests v
       JOIN invocations i ON i.id = v.invocation_uid
       JOIN runtimes r ON r.id = v.runtime_id
      WHERE i.invocation_id = $1 AND ($2::uuid IS NULL OR v.runtime_id = $2::uuid) AND ($3::text IS NULL OR r.name = $3)
      ORDER BY v.created_at DESC LIMIT 1`,
    [invocationId, scope.runtimeId ?? null, scope.runtime ?? null],
  );
  return row ?? null;
}

/** The runtime and tool of an invocation, for one Settle has not asked a verifier about. */
export async function selectInvocationTool(
  q: Query,
  invocationId: string,
  scope: { runtimeId?: string; runtime?: string },
): Promise<{ runtime_id: string; tool: string } | null> {
  const [row] = await q.query<{ runtime_id: string; tool: string }>(
    `SELECT i.runtime_id::text AS runtime_id, i.tool
       FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
      WHERE i.invocation_id = $1 AND ($2::uuid IS NULL OR i.runtime_id = $2::uuid) AND ($3::text IS NULL OR r.name = $3)
      ORDER BY i.first_seen_at DESC LIMIT 1`,
    [invocationId, scope.runtimeId ?? null, scope.runtime ?? null],
  );
  return row ?? null;
}

/** Runtimes with open requests due now and free to lease. */
export async function selectRuntimesWithDueRequests(q: Query, now: Date): Promise<string[]> {
  const rows = await q.query<{ runtime_id: string }>(
    `SELECT DISTINCT runtime_id::text AS runtime_id FROM verification_requests
      WHERE state IN ('scheduled', 'open') AND due_at <= $1::timestamptz
        AND (leased_until IS NULL OR leased_until <= $1::timestamptz)
        AND tries < (config->>'max_tries')::int`,
    [now.toISOString()],
  );
  return rows.map((r) => r.runtime_id);
}

/** A request by id alone, for an answer that arrives as a webhook's 2xx body (the event names its runtime). */
export async function selectRuntimeOfRequest(q: Query, id: string): Promise<string | null> {
  const [row] = await q.query<{ runtime_id: string }>(
    `SELECT runtime_id::text AS runtime_id FROM verification_requests WHERE id = $1::uuid LIMIT 1`,
    [id],
  );
  return row?.runtime_id ?? null;
}
