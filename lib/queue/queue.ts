import "server-only";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { loadPolicies, resolvePolicy, type PolicySet } from "../policies/policies";
import { slaOf } from "../outcome/sla";
import { queueStatuses, statusFilterSql, type InvocationStatus } from "../outcome/status";
import { queueOrderSql, sqlWords } from "../outcome/queue-order";
import { OPEN_REVIEW } from "../outcome/duplicates";
import { containsPattern } from "../db/like";
import { boundParams } from "../db/params";
import { toSummary, type InvocationSummary, type Scope } from "../invocations/read";
import type { InvocationSqlRow } from "../invocations/sql-row";
import { effectClasses, QUEUE_COUNT_LIMIT, QUEUE_IDS_LIMIT, queueFilterKeys, UNCLASSIFIED } from "./filters";

// The queue (docs/outcome-model.md §4 "in the queue"): everything that needs a person, the
// headline (outcome unknown, stalled) first, then money before destructive
// before send before create before read, then the longest waiting. One SQL
// query, ordered by the same expressions as the index
// `invocations_queue_order_idx` (migration *_queue_order), so a page is an
// index range scan however long the table is; pages are keyset, never OFFSET.

export {
  ageOptions,
  BULK_MAX_TARGETS,
  effectClasses,
  QUEUE_COUNT_LIMIT,
  QUEUE_IDS_LIMIT,
  queueFilterKeys,
  UNCLASSIFIED,
  type QueueFilterKey,
} from "./filters";

export { queueFilterSchema, queueItemSchema, queuePageSchema, queueQuerySchema, queueTargetsSchema } from "./schemas";
export type { QueueFilters, QueueItem, QueueQuery } from "./schemas";
import { queuePageSchema, queueTargetsSchema, type QueueFilters, type QueueItem, type QueueQuery } from "./schemas";

/** `limits` are smaller caps, for tests. */
export type QueueContext = { scope: Scope; me?: string; now?: Date; limits?: { count?: number; targets?: number } };
export type QueuePage = z.infer<typeof queuePageSchema>;
export type QueueTarget = { invocation_id: string; runtime: string; version: number };

const NOW = "$1::timestamptz";

/**
 * The sort key, generated with `invocations_queue_order_idx` from the same
 * constants (lib/outcome/queue-order.ts): the planner matches them by form. It never reads the clock: in
 * the queue a pending row is always a stalled one, ranked with the headline
 * from the moment its window passed; with settled rows included ("all"), an
 * in-flight intent ranks there too (by when it will stall), and everything
 * settled comes after everything that needs a person.
 */
const KEY = queueOrderSql("i.");
const ORDER = `${KEY.tier}, ${KEY.rank}, ${KEY.since}, i.id`;

type Cursor = { tier: number; rank: number; since: string; id: string };

export function encodeQueueCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.tier, c.rank, c.since, c.id])).toString("base64url");
}

function decodeQueueCursor(cursor: string): Cursor | null {
  try {
    const [tier, rank, since, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (typeof tier !== "number" || typeof rank !== "number" || typeof since !== "string" || typeof id !== "string")
      return null;
    if (Number.isNaN(Date.parse(since)) || !/^[0-9a-f-]{36}$/i.test(id)) return null;
    return { tier, rank, since, id };
  } catch {
    return null;
  }
}

const AGE_UNIT_S = { m: 60, h: 3600, d: 86400 } as const;

export function ageSeconds(age: string): number {
  const unit = age.slice(-1) as keyof typeof AGE_UNIT_S;
  return Number(age.slice(0, -1)) * AGE_UNIT_S[unit];
}

/** Above this many candidates, narrowing a search through the trigram index costs more than reading the table. */
export const SEARCH_INDEX_LIMIT = 2_000;

/**
 * Whether to narrow a search through invocation_search's trigram index
 * (migration *_queue_search). A selective q ("task-6123": 44 of 250,000) is
 * found there in a few ms; a broad one ("inv-1": 111,000) is cheaper to test
 * row by row than to join, so the index is counted up to the limit first. Not
 * when the index is missing (PostgreSQL without pg_trgm). Either way the exact
 * per-id test decides what matches; this only picks the plan.
 */
async function narrowsSearch(db: Db, q: string): Promise<boolean> {
  const rows = await db.driver.query<{ n: number }>(
    `SELECT CASE WHEN to_regclass('invocation_search_ids_trgm_idx') IS NULL THEN -1
                 ELSE (SELECT count(*) FROM (SELECT 1 FROM invocation_search WHERE ids LIKE $1 LIMIT ${SEARCH_INDEX_LIMIT + 1}) AS c)
            END::int AS n`,
    [containsPattern(q)],
  );
  const n = Number(rows[0]?.n ?? -1);
  return n >= 0 && n <= SEARCH_INDEX_LIMIT;
}

/**
 * WHERE clause, parameters and sort key for a filter. `$1` is "now"; every
 * query selects it (as `as_of`), since PostgreSQL refuses a parameter it never sees.
 */
function buildFilter(filters: QueueFilters, ctx: QueueContext, narrowSearch = false) {
  const now = (ctx.now ?? new Date()).toISOString();
  const { params, bind: p } = boundParams([now]);
  const statuses: InvocationStatus[] | "all" = filters.status ?? [...queueStatuses];
  const where: string[] = [];
  const queueOnly = statuses !== "all" && statuses.every((s) => queueStatuses.includes(s));

  if (statuses !== "all") {
    const byStatus = statusFilterSql(statuses, "i.", () => NOW, p);
    // The default queue also holds possible duplicate effects waiting for review, whatever their status.
    where.push(
      filters.status === undefined
        ? `(${byStatus} OR i.duplicate_review = ${sqlWords([OPEN_REVIEW])} OR i.args_review = ${sqlWords([OPEN_REVIEW])})`
        : byStatus,
    );
  }
  if (ctx.scope.runtimeId) where.push(`i.runtime_id = ${p(ctx.scope.runtimeId)}::uuid`);
  if (filters.runtime) where.push(`i.runtime_id = (SELECT id FROM runtimes WHERE name = ${p(filters.runtime)})`);
  if (filters.tool) where.push(`i.tool = ${p(filters.tool)}`);
  if (filters.effect_class) {
    const named = filters.effect_class.filter((c) => c !== UNCLASSIFIED);
    const or = named.length > 0 ? [`i.effect_class = ANY(${p(named)}::text[])`] : [];
    if (filters.effect_class.includes(UNCLASSIFIED)) {
      or.push(`(i.effect_class IS NULL OR i.effect_class NOT IN (${sqlWords(effectClasses)}))`);
    }
    where.push(`(${or.join(" OR ")})`);
  }
  if (filters.assignee) {
    // Compared as stored (an equality the planner has statistics for); emails are kept lower-case.
    const who = filters.assignee;
    if (who === "none") where.push(`i.assignee IS NULL`);
    else if (who === "me") {
      if (!ctx.me)
        throw new ApiError("INVALID_REQUEST", "assignee=me needs a person; a runtime key has no assignments.");
      where.push(`i.assignee = ${p(ctx.me)}`);
    } else where.push(`i.assignee = ${p(who)}`);
  }
  if (filters.q) {
    const like = p(containsPattern(filters.q));
    // Identifiers are matched as written (LIKE, not ILIKE): ids are case-sensitive. With `narrowSearch`,
    // candidates come from the trigram index of invocation_search (the three ids joined): a test that
    // holds whenever one of the ids matches, so the second, exact test alone decides.
    if (narrowSearch) where.push(`i.id IN (SELECT s.invocation_uid FROM invocation_search s WHERE s.ids LIKE ${like})`);
    where.push(`(i.task_id LIKE ${like} OR i.invocation_id LIKE ${like} OR i.idempotency_key LIKE ${like})`);
  }
  if (filters.age) {
    where.push(
      `${KEY.since} <= ${p(new Date(Date.parse(now) - ageSeconds(filters.age) * 1000).toISOString())}::timestamptz`,
    );
  }
  return { now, params, p, where, queueOnly };
}

const whereSql = (where: string[]) => (where.length > 0 ? `WHERE ${where.join(" AND ")}` : "");

type QueueRow = InvocationSqlRow & {
  args_mismatch: boolean;
  k_tier: number;
  k_rank: number;
  k_since: Date | string;
  trace_service: { service: string | null } | null;
};

const date = (v: Date | string) => (v instanceof Date ? v : new Date(v));
const dateOrNull = (v: Date | string | null) => (v === null ? null : date(v));

function itemOf(r: QueueRow, now: Date, policies: PolicySet): QueueItem {
  const summary = summaryOf(r, now);
  return {
    ...summary,
    sla: slaOf(summary, resolvePolicy(policies, summary.effect_class), now),
    trace: r.trace_service ? { service: r.trace_service.service, trace_id: r.task_id } : null,
  };
}

function summaryOf(r: QueueRow, now: Date): InvocationSummary {
  return toSummary(
    {
      id: r.id,
      runtimeId: r.runtime_id,
      invocationId: r.invocation_id,
      taskId: r.task_id,
      tool: r.tool,
      effectClass: r.effect_class,
      idempotencyKey: r.idempotency_key,
      status: r.status,
      commitState: r.commit_state,
      nextAction: r.next_action,
      version: r.version,
      conflict: r.conflict,
      attemptCount: r.attempt_count,
      firstSeenAt: date(r.first_seen_at),
      lastAttemptAt: date(r.last_attempt_at),
      statusSince: date(r.status_since),
      stallAt: dateOrNull(r.stall_at),
      notBefore: dateOrNull(r.not_before),
      assignee: r.assignee,
      userMessage: r.user_message,
      lastCode: r.last_code,
      resolution: (typeof r.resolution === "string" ? JSON.parse(r.resolution) : r.resolution) as never,
      updatedAt: date(r.updated_at),
      argsDigest: r.args_digest,
      summary: r.summary,
      argsMismatch: Boolean(r.args_mismatch),
      possibleDuplicateOf: r.possible_duplicate_of,
      duplicateReview: r.duplicate_review,
      argsReview: r.args_review,
      runtime: { name: r.runtime },
    },
    now,
  );
}

type QueueCount = { total: number; total_capped: boolean };

/** Counts the rows a filter matches, reading at most `limit` + 1 of them. */
async function countQueue(db: Db, where: string[], params: unknown[], limit: number): Promise<QueueCount> {
  // Never in parallel: it reads at most limit + 1 index entries, and on a large table the planner would start
  // workers for it, whose start-up cost more than the scan (9 ms for a 0.7 ms scan at 10M attempts).
  const rows = await db.driver.transaction(
    (tx) =>
      tx.query<{ total: number }>(
        `SELECT count(*)::int AS total, ${NOW} AS as_of FROM (SELECT 1 FROM invocations i ${whereSql(where)} LIMIT ${limit + 1}) AS c`,
        params,
      ),
    { settings: ["max_parallel_workers_per_gather = 0"] },
  );
  const n = Number(rows[0]?.total ?? 0);
  return n > limit ? { total: limit, total_capped: true } : { total: n, total_capped: false };
}

const countLimitOf = (ctx: QueueContext) => ctx.limits?.count ?? QUEUE_COUNT_LIMIT;

// A task that is a span's trace id (OTLP, no task attribute): the service.name of the span that reported it, read
// from its latest span attempt through the runtime-led attempts index; other rows never look.
const TRACE_SERVICE = `CASE WHEN i.task_id ~ '^[0-9a-f]{32}$' THEN (
    SELECT jsonb_build_object('service', a.safe_details->>'service.name') FROM attempts a
     WHERE a.runtime_id = i.runtime_id AND a.invocation_uid = i.id AND a.safe_details->>'otel.trace_id' = i.task_id
     ORDER BY a.attempt_no DESC LIMIT 1) END`;

/** One page of the queue for a filter, and how many invocations the filter matches in all (up to a cap). */
export async function listQueue(db: Db, query: QueueQuery, ctx: QueueContext): Promise<QueuePage> {
  const { now, params, p, where, queueOnly } = buildFilter(
    query,
    ctx,
    query.q ? await narrowsSearch(db, query.q) : false,
  );
  // Bounds the index scan to what needs a person, however many are settled; the count reads the same bound
  // from invocations_queue_count_idx, which holds only those rows and the columns the filter reads (an
  // index-only scan that stops at the cap, however long the queue is).
  if (queueOnly) where.push(`${KEY.tier} <= 1`);
  const countWhere = [...where];
  const countParams = [...params];
  if (query.cursor) {
    const c = decodeQueueCursor(query.cursor);
    if (!c)
      throw new ApiError("INVALID_REQUEST", "The cursor is not one this queue handed out; start again without it.");
    where.push(
      `(${KEY.tier}, ${KEY.rank}, ${KEY.since}, i.id) > (${p(c.tier)}::int, ${p(c.rank)}::int, ${p(c.since)}::timestamptz, ${p(c.id)}::uuid)`,
    );
  }
  const limit = p(query.limit + 1);
  const pageSql = `
    SELECT i.id::text AS id, i.runtime_id::text AS runtime_id, r.name AS runtime, i.invocation_id, i.task_id, i.tool,
           i.effect_class, i.idempotency_key, i.status, i.commit_state, i.next_action, i.version, i.conflict,
           i.attempt_count, i.first_seen_at, i.last_attempt_at, i.status_since, i.stall_at, i.not_before, i.updated_at,
           i.assignee, i.user_message, i.last_code, i.resolution, i.args_digest, i.summary, i.possible_duplicate_of, i.duplicate_review, i.args_review,
           coalesce((i.fold->>'argsMismatch')::boolean, false) AS args_mismatch,
           ${TRACE_SERVICE} AS trace_service,
           ${KEY.tier} AS k_tier, ${KEY.rank} AS k_rank, ${KEY.since} AS k_since, ${NOW} AS as_of
      FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
      ${whereSql(where)}
     ORDER BY ${ORDER}
     LIMIT ${limit}::int`;
  // Overdue is computed here from the policies (a handful of rows, read once per page), never stored.
  const [rows, counted, policies] = await Promise.all([
    db.driver.query<QueueRow>(pageSql, params),
    countQueue(db, countWhere, countParams, countLimitOf(ctx)),
    loadPolicies(db.driver),
  ]);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  const asOf = new Date(now);
  return {
    items: page.map((r) => itemOf(r, asOf, policies)),
    next_cursor:
      rows.length > query.limit && last
        ? encodeQueueCursor({
            tier: Number(last.k_tier),
            rank: Number(last.k_rank),
            since: date(last.k_since).toISOString(),
            id: last.id,
          })
        : null,
    ...counted,
    as_of: now,
  };
}

/**
 * "Select all matching this filter": the first 5,000 in queue order, with the
 * version each has now, and the (capped) count. `truncated` comes from the
 * same read as the items, so "the first 5,000" is said whenever there are more.
 */
export async function listQueueTargets(
  db: Db,
  filters: QueueFilters,
  ctx: QueueContext,
): Promise<z.infer<typeof queueTargetsSchema>> {
  const { params, where, queueOnly } = buildFilter(
    filters,
    ctx,
    filters.q ? await narrowsSearch(db, filters.q) : false,
  );
  const max = ctx.limits?.targets ?? QUEUE_IDS_LIMIT;
  const count = countQueue(db, [...where], [...params], Math.max(countLimitOf(ctx), max));
  if (queueOnly) where.push(`${KEY.tier} <= 1`);
  const [rows, counted] = await Promise.all([
    db.driver.query<{ invocation_id: string; runtime: string; version: number }>(
      `SELECT i.invocation_id, r.name AS runtime, i.version, ${NOW} AS as_of
         FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
         ${whereSql(where)}
        ORDER BY ${ORDER}
        LIMIT ${max + 1}`,
      params,
    ),
    count,
  ]);
  const items = rows
    .slice(0, max)
    .map((r) => ({ invocation_id: r.invocation_id, runtime: r.runtime, version: Number(r.version) }));
  const truncated = rows.length > max;
  // Two statements, two snapshots: never report fewer matches than the targets read saw.
  const total = counted.total_capped ? counted.total : Math.max(counted.total, rows.length);
  return { items, total, total_capped: counted.total_capped, truncated };
}

/** Whether any runtime has ever reported anything (the console's first empty state). */
export async function anyInvocations(db: Db): Promise<boolean> {
  const rows = await db.driver.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM invocations) AS any`);
  return Boolean(rows[0]?.any);
}

/** Keeps only the queue's own filter parameters, in a stable order (for saved views and shared links). */
export function normalizeQueueQuery(search: string | URLSearchParams): string {
  const given = typeof search === "string" ? new URLSearchParams(search.replace(/^\?/, "")) : search;
  const kept = new URLSearchParams();
  for (const k of queueFilterKeys) {
    const v = given.get(k)?.trim();
    if (v) kept.set(k, v);
  }
  return kept.toString();
}
