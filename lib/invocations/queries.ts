import "server-only";
// Every SQL statement that reads invocations, tasks, their attempts and audit
// trails, for the API, the console's pages and the decision view: one place,
// bound parameters only, all through the SQL driver (`db.driver.query`, no
// transaction: each read is one statement, or statements that may see
// different moments, as every read of the API always could).
//
// Why raw SQL rather than Prisma: the task page's read through Prisma's
// relation includes cost 70–130 ms of the server's CPU for a task with 1,000
// attempts (bench:console); these statements, 25–40. The attempts page orders
// and pages by a row value (ATTEMPT_ORDER), which Prisma cannot say; the
// decision view joins the last status change laterally in the same lookup its
// long poll repeats every 300 ms; and named statements are parsed and planned
// once per connection. The list with filters composes its conditions from
// the outcome module's SQL (statusFilterSql), as the queue does.

import type { Db } from "../db/client";
import { phaseRank } from "../outcome/fold";
import type { Phase } from "../outcome/vocabulary";
import { statusFilterSql, type InvocationStatus } from "../outcome/status";
import { containsPattern } from "../db/like";
import { boundParams } from "../db/params";
import type { InvocationRowWithHistory } from "./read";
import {
  actionOf,
  attemptOf,
  date,
  dateOrNull,
  int,
  invocationOf,
  json,
  text,
  textOrNull,
  type ActionRow,
  type AttemptRow,
  type InvocationRow,
  type Raw,
} from "./rows";

export type { InvocationRow } from "./rows";

const INVOCATION_COLUMNS = `i.id::text, i.runtime_id::text, r.name AS runtime, i.invocation_id, i.task_id, i.tool, i.effect_class, i.idempotency_key,
         i.status, i.commit_state, i.next_action, i.version, i.conflict, i.attempt_count, i.first_seen_at, i.last_attempt_at,
         i.status_since, i.stall_at, i.not_before, i.assignee, i.user_message, i.last_code, i.resolution, i.updated_at,
         i.args_digest, i.summary, i.possible_duplicate_of, i.duplicate_review, i.args_review,
         coalesce((i.fold->>'argsMismatch')::boolean, false) AS args_mismatch,
         CASE WHEN i.fold ? 'pendingEdit' THEN jsonb_build_object('state', 'pending') || (i.fold->'pendingEdit')
              WHEN i.fold ? 'approvedEdit' THEN jsonb_build_object('state', 'approved') || (i.fold->'approvedEdit') END AS arguments_edit`;

const INVOCATION_SELECT = `
  SELECT ${INVOCATION_COLUMNS}
    FROM invocations i JOIN runtimes r ON r.id = i.runtime_id`;

// An invocation id as a caller names it: in their scope ($2), in the runtime they name ($3), first by id.
const INVOCATION_LOOKUP = `${INVOCATION_SELECT}
   WHERE i.invocation_id = $1 AND ($2::uuid IS NULL OR i.runtime_id = $2::uuid) AND ($3::text IS NULL OR r.name = $3)
   ORDER BY i.id LIMIT $4::int`;

const TASK_INVOCATIONS = `${INVOCATION_SELECT}
   WHERE i.runtime_id = $1::uuid AND i.task_id = $2
   ORDER BY i.first_seen_at, i.invocation_id`;

// A task id as a caller names it, the latest seen first.
const TASK_LOOKUP = `
  SELECT t.runtime_id::text, r.name AS runtime, t.task_id, t.first_seen_at, t.last_seen_at
    FROM tasks t JOIN runtimes r ON r.id = t.runtime_id
   WHERE t.task_id = $1 AND ($2::uuid IS NULL OR t.runtime_id = $2::uuid) AND ($3::text IS NULL OR r.name = $3)
   ORDER BY t.last_seen_at DESC LIMIT $4::int`;

// The invocation and the last audit entry that changed its status: one indexed lookup each.
const DECISION = `
  SELECT ${INVOCATION_COLUMNS}, a.actor AS action_actor, a.at AS action_at, a.to_status AS action_to,
         a.payload->'action'->>'reply' AS action_reply, i.fold->'approvedEdit'->'arguments' AS approved_arguments
    FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
    LEFT JOIN LATERAL (
      SELECT actor, at, to_status, payload FROM invocation_actions
       WHERE invocation_uid = i.id AND from_status <> to_status
       ORDER BY seq DESC LIMIT 1) a ON true
   WHERE i.runtime_id = $1::uuid AND i.invocation_id = $2`;

const ACTION_COLUMNS =
  "id::text, runtime_id::text, invocation_uid::text, seq, action, actor, at, from_status, to_status, note, payload";

const attemptColumns = (light: boolean) =>
  `invocation_uid::text, runtime_id::text, event_key, event_id, seq, attempt_id, attempt_no, phase, at, received_at, tool,
   effect_class, idempotency_key, budget_left_s, args_digest, summary, dialect, wrapper_dialect, outcome, commit_state, code, category,
   retry_directive, not_before, max_attempts_remaining, next_action, dispatch_stage, probe_result, user_message, items, ignored
   ${light ? "" : ", safe_details, agent_message, envelope, arguments"}`;

// The fold's phase order (lib/outcome/fold.ts) in SQL; the last phase also takes anything else, as it always did.
const phases = (Object.entries(phaseRank) as Array<[Phase, number]>).sort((a, b) => a[1] - b[1]);
const PHASE_RANK_SQL = `CASE phase ${phases
  .slice(0, -1)
  .map(([p, n]) => `WHEN '${p}' THEN ${n}`)
  .join(" ")} ELSE ${phases[phases.length - 1]![1]} END`;

// The order an invocation's attempts are shown in (read.ts toInvocationView), as a row value to page by.
const ATTEMPT_ORDER = ["coalesce(attempt_no, 0)", "at", PHASE_RANK_SQL, "received_at", "event_key"];

/** Whom a read is for: the caller's runtime (a runtime key) or any, and the runtime the caller named, if any. */
export type RowScope = { runtimeId?: string; runtime?: string };

/** The invocations by this id the caller can see, first by id: at most `limit`. */
export async function selectInvocationRows(
  db: Db,
  scope: RowScope,
  invocationId: string,
  limit: number,
): Promise<InvocationRow[]> {
  const rows = await db.driver.query<Raw>(
    INVOCATION_LOOKUP,
    [invocationId, scope.runtimeId ?? null, scope.runtime ?? null, limit],
    { prepareAs: "settle_lookup_invocation", exactJson: true },
  );
  return rows.map(invocationOf);
}

export type TaskRow = { runtimeId: string; runtime: string; taskId: string; firstSeenAt: Date; lastSeenAt: Date };

/** The tasks by this id the caller can see, the latest seen first: at most `limit`. */
export async function selectTaskRows(db: Db, scope: RowScope, taskId: string, limit: number): Promise<TaskRow[]> {
  const rows = await db.driver.query<Raw>(
    TASK_LOOKUP,
    [taskId, scope.runtimeId ?? null, scope.runtime ?? null, limit],
    { prepareAs: "settle_lookup_task" },
  );
  return rows.map((r) => ({
    runtimeId: text(r.runtime_id),
    runtime: text(r.runtime),
    taskId: text(r.task_id),
    firstSeenAt: date(r.first_seen_at),
    lastSeenAt: date(r.last_seen_at),
  }));
}

/** A runtime's id by its name; null when there is none. */
export async function selectRuntimeId(db: Db, name: string): Promise<string | null> {
  const [row] = await db.driver.query<{ id: string }>(`SELECT id::text FROM runtimes WHERE name = $1`, [name], {
    prepareAs: "settle_runtime_by_name",
  });
  return row?.id ?? null;
}

export type InvocationListFilter = {
  statuses?: InvocationStatus[];
  tool?: string;
  effectClasses?: string[];
  q?: string;
  after?: { at: Date; id: string } | null;
  now: Date;
  limit: number;
};

/** One runtime's invocations matching the filter, newest attempt first (the (runtime_id, last_attempt_at) index). */
export async function selectInvocationList(
  db: Db,
  runtimeId: string,
  f: InvocationListFilter,
): Promise<InvocationRow[]> {
  const { params, bind: p } = boundParams([runtimeId]);
  const where = ["i.runtime_id = $1::uuid"];
  if (f.statuses) where.push(statusFilterSql(f.statuses, "i.", () => `${p(f.now.toISOString())}::timestamptz`, p));
  if (f.tool) where.push(`i.tool = ${p(f.tool)}`);
  if (f.effectClasses) where.push(`i.effect_class = ANY(${p(f.effectClasses)}::text[])`);
  if (f.q) {
    const like = p(containsPattern(f.q));
    where.push(`(i.task_id ILIKE ${like} OR i.invocation_id ILIKE ${like} OR i.idempotency_key ILIKE ${like})`);
  }
  if (f.after)
    where.push(`(i.last_attempt_at, i.id) < (${p(f.after.at.toISOString())}::timestamptz, ${p(f.after.id)}::uuid)`);
  const rows = await db.driver.query<Raw>(
    `${INVOCATION_SELECT} WHERE ${where.join(" AND ")} ORDER BY i.last_attempt_at DESC, i.id DESC LIMIT ${p(f.limit)}::int`,
    params,
  );
  return rows.map(invocationOf);
}

/** Where a page of attempts ends: the order key of its oldest attempt. */
export type AttemptCursor = { attempt: number; at: string; phase: number; received_at: string; event_key: string };

export function encodeAttemptCursor(c: AttemptCursor): string {
  return Buffer.from(JSON.stringify([c.attempt, c.at, c.phase, c.received_at, c.event_key])).toString("base64url");
}

/** A cursor this API handed out, or null for anything else. */
export function decodeAttemptCursor(cursor: string): AttemptCursor | null {
  try {
    const [attempt, at, phase, receivedAt, eventKey] = JSON.parse(
      Buffer.from(cursor, "base64url").toString("utf8"),
    ) as unknown[];
    const time = (v: unknown) => typeof v === "string" && /^\d{4}-\d\d-\d\dT/.test(v) && !Number.isNaN(Date.parse(v));
    if (
      !Number.isInteger(attempt) ||
      !Number.isInteger(phase) ||
      !time(at) ||
      !time(receivedAt) ||
      typeof eventKey !== "string"
    )
      return null;
    return {
      attempt: attempt as number,
      at: at as string,
      phase: phase as number,
      received_at: receivedAt as string,
      event_key: eventKey,
    };
  } catch {
    return null;
  }
}

const phaseOrder = phaseRank as Record<string, number>;

/**
 * The latest `limit` attempts of an invocation (before `before`, when given),
 * in the order the API shows them, how many it has in all, and the cursor of
 * the page before, if there is one.
 */
export async function selectAttemptsPage(
  db: Db,
  invocation: { id: string; runtimeId: string },
  options: { limit: number; before?: AttemptCursor },
): Promise<{ attempts: AttemptRow[]; total: number; earlier: string | null }> {
  const b = options.before;
  const [rows, counted] = await Promise.all([
    db.driver.query<Raw>(
      `SELECT ${attemptColumns(false)} FROM attempts
        WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid
          AND ($4::int IS NULL OR (${ATTEMPT_ORDER.join(", ")}) < ($4::int, $5::timestamptz, $6::int, $7::timestamptz, $8::text))
        ORDER BY ${ATTEMPT_ORDER.map((k) => `${k} DESC`).join(", ")}
        LIMIT $3::int`,
      [
        invocation.runtimeId,
        invocation.id,
        options.limit + 1,
        b?.attempt ?? null,
        b?.at ?? null,
        b?.phase ?? null,
        b?.received_at ?? null,
        b?.event_key ?? null,
      ],
      // A caller's arguments and envelope as stored, every digit of a long integer kept (lib/json).
      { prepareAs: "settle_read_attempts_page", exactJson: true },
    ),
    db.driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid`,
      [invocation.runtimeId, invocation.id],
      {
        prepareAs: "settle_count_attempts",
      },
    ),
  ]);
  const page = rows
    .slice(0, options.limit)
    .map((r) => attemptOf(r, false))
    .reverse();
  const oldest = page[0];
  const earlier =
    rows.length > options.limit && oldest
      ? encodeAttemptCursor({
          attempt: oldest.attemptNo ?? 0,
          at: oldest.at.toISOString(),
          phase: phaseOrder[oldest.phase] ?? 2,
          received_at: oldest.receivedAt.toISOString(),
          event_key: oldest.eventKey,
        })
      : null;
  return { attempts: page, total: Number(counted[0]?.n ?? 0), earlier };
}

/** The audit trail of one invocation, by seq. */
export async function selectActions(db: Db, uid: string): Promise<ActionRow[]> {
  const rows = await db.driver.query<Raw>(
    `SELECT ${ACTION_COLUMNS} FROM invocation_actions WHERE invocation_uid = $1::uuid ORDER BY seq`,
    [uid],
    { prepareAs: "settle_read_actions", exactJson: true },
  );
  return rows.map(actionOf);
}

/** A write the guard refused as a possible duplicate of an invocation, and whether an operator cleared its key since. */
export type DuplicateRefusalRow = {
  idempotencyKey: string;
  taskId: string;
  refused: number;
  lastAt: Date;
  clearedBy: string | null;
  clearedAt: Date | null;
};

// The guard's possible-duplicate refusals naming one invocation, by key, the latest first
// (guard_checks_possible_duplicate_idx), with the operator's "not a duplicate" for the key if any.
const DUPLICATE_REFUSALS = `
  SELECT g.idempotency_key, min(g.task_id) AS task_id, count(*)::int AS refused, max(g.at) AS last_at, d.actor AS cleared_by, d.at AS cleared_at
    FROM guard_checks g
    LEFT JOIN duplicate_clearances d ON d.runtime_id = g.runtime_id AND d.invocation_id = g.invocation_id AND d.idempotency_key = g.idempotency_key
   WHERE g.runtime_id = $1::uuid AND g.invocation_id = $2 AND g.reason = 'possible_duplicate'
   GROUP BY g.idempotency_key, d.actor, d.at
   ORDER BY max(g.at) DESC
   LIMIT 20`;

export async function selectDuplicateRefusals(
  db: Db,
  invocation: Pick<InvocationRow, "runtimeId" | "invocationId">,
): Promise<DuplicateRefusalRow[]> {
  const rows = await db.driver.query<Raw>(DUPLICATE_REFUSALS, [invocation.runtimeId, invocation.invocationId], {
    prepareAs: "settle_read_duplicate_refusals",
  });
  return rows.map((r) => ({
    idempotencyKey: text(r.idempotency_key),
    taskId: text(r.task_id),
    refused: int(r.refused),
    lastAt: date(r.last_at),
    clearedBy: textOrNull(r.cleared_by),
    clearedAt: dateOrNull(r.cleared_at),
  }));
}

/** One runtime's task: its invocations, first seen first, without attempts or actions. */
export async function selectTaskInvocationRows(db: Db, runtimeId: string, taskId: string): Promise<InvocationRow[]> {
  const rows = await db.driver.query<Raw>(TASK_INVOCATIONS, [runtimeId, taskId], {
    prepareAs: "settle_read_task_invocations",
    exactJson: true,
  });
  return rows.map(invocationOf);
}

/** The attempts and actions (by seq) of these invocations. `light` leaves out envelopes, safe details and agent messages. */
export async function selectHistories(
  db: Db,
  rows: InvocationRow[],
  light: boolean,
): Promise<InvocationRowWithHistory[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // Every row here is one runtime's (a task's invocations): the lookup names it, as the index does.
  const [attempts, actions] = await Promise.all([
    db.driver.query<Raw>(
      `SELECT ${attemptColumns(light)} FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = ANY($2::uuid[])`,
      [rows[0]!.runtimeId, ids],
      // A caller's arguments and envelope as stored, every digit of a long integer kept (lib/json).
      { prepareAs: light ? "settle_read_histories_light" : "settle_read_histories", exactJson: true },
    ),
    db.driver.query<Raw>(
      `SELECT ${ACTION_COLUMNS} FROM invocation_actions WHERE invocation_uid = ANY($1::uuid[]) ORDER BY seq`,
      [ids],
      // An edit's diff and arguments, to the digit, as an edit's arguments (arguments_edit) are read above.
      { prepareAs: "settle_read_histories_actions", exactJson: true },
    ),
  ]);
  const byId = new Map(rows.map((r) => [r.id, { ...r, attempts: [], actions: [] } as InvocationRowWithHistory]));
  for (const a of attempts) byId.get(text(a.invocation_uid))?.attempts.push(attemptOf(a, light));
  for (const a of actions) byId.get(text(a.invocation_uid))?.actions.push(actionOf(a));
  return [...byId.values()];
}

/** One runtime's task: its invocations (first seen first) with their attempts and actions. */
export async function selectTaskInvocations(
  db: Db,
  runtimeId: string,
  taskId: string,
  light: boolean,
): Promise<InvocationRowWithHistory[]> {
  return selectHistories(db, await selectTaskInvocationRows(db, runtimeId, taskId), light);
}

/** The last audit entry that changed the invocation's status. */
/** The last status change by an action: who, when, to what, and the words to the agent it carried (a reply). */
export type StatusChange = { actor: string; at: Date; toStatus: string; reply: string | null };

/** What the decision view reads: a runtime's invocation and its last status change; null when it has none by this id. */
export async function selectDecisionRow(
  db: Db,
  runtimeId: string,
  invocationId: string,
): Promise<{
  invocation: InvocationRow;
  lastChange: StatusChange | null;
  /** The edited arguments of the last approval, until the call asks for approval again (fold approvedEdit). */
  approvedArguments: Record<string, unknown> | null;
} | null> {
  const options = { prepareAs: "settle_read_decision", exactJson: true };
  const [row] = await db.driver.query<Raw>(DECISION, [runtimeId, invocationId], options);
  if (!row) return null;
  const lastChange =
    row.action_at === null || row.action_at === undefined
      ? null
      : {
          actor: text(row.action_actor),
          at: date(row.action_at),
          toStatus: text(row.action_to),
          reply: textOrNull(row.action_reply),
        };
  const approved = json(row.approved_arguments);
  return {
    invocation: invocationOf(row),
    lastChange,
    approvedArguments: approved && typeof approved === "object" ? (approved as Record<string, unknown>) : null,
  };
}
