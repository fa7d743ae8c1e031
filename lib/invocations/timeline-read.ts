import type { Db } from "../db/client";
import type { InvocationRowWithHistory } from "./read";

// The task page's read in plain SQL: the task's invocations, then their
// attempts and actions, in the shapes toInvocationView takes. The same read
// through Prisma's relation includes cost 70–130 ms of the server's CPU for a
// task with 1,000 attempts (bench:console); these three statements, 25–40.

type Raw = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
// jsonb arrives parsed (pg and Prisma both parse it); a JSON string is a string value, not text to parse again.
const json = (v: unknown): unknown => v;
const int = (v: unknown): number => Number(v);
const intOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const text = (v: unknown): string => String(v);
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

const INVOCATION_SELECT = `
  SELECT i.id::text, i.runtime_id::text, r.name AS runtime, i.invocation_id, i.task_id, i.tool, i.effect_class, i.idempotency_key,
         i.status, i.commit_state, i.next_action, i.version, i.conflict, i.attempt_count, i.first_seen_at, i.last_attempt_at,
         i.status_since, i.stall_at, i.not_before, i.assignee, i.user_message, i.last_code, i.resolution, i.updated_at
    FROM invocations i JOIN runtimes r ON r.id = i.runtime_id`;

const INVOCATIONS = `${INVOCATION_SELECT}
   WHERE i.runtime_id = $1::uuid AND i.task_id = $2
   ORDER BY i.first_seen_at, i.invocation_id`;

// Several runtimes may use one invocation id: without a runtime, the first (as the API always did).
const INVOCATION = `${INVOCATION_SELECT}
   WHERE i.invocation_id = $1 AND ($2::uuid IS NULL OR i.runtime_id = $2::uuid)
   ORDER BY i.id LIMIT 1`;

const attemptColumns = (light: boolean) =>
  `invocation_uid::text, runtime_id::text, event_key, event_id, seq, attempt_id, attempt_no, phase, at, received_at, tool,
   effect_class, idempotency_key, budget_left_s, args_digest, dialect, wrapper_dialect, outcome, commit_state, code, category,
   retry_directive, not_before, max_attempts_remaining, next_action, dispatch_stage, probe_result, user_message, items, ignored
   ${light ? "" : ", safe_details, agent_message, envelope"}`;

// The order an invocation's attempts are shown in (invocations.ts toInvocationView), as a row value to page by.
const ATTEMPT_ORDER = ["coalesce(attempt_no, 0)", "at", "CASE phase WHEN 'intent' THEN 0 WHEN 'outcome' THEN 1 ELSE 2 END", "received_at", "event_key"];

function invocationOf(r: Raw): InvocationRow {
  return {
    id: text(r.id),
    runtimeId: text(r.runtime_id),
    invocationId: text(r.invocation_id),
    taskId: text(r.task_id),
    tool: text(r.tool),
    effectClass: textOrNull(r.effect_class),
    idempotencyKey: textOrNull(r.idempotency_key),
    status: text(r.status),
    commitState: text(r.commit_state),
    nextAction: text(r.next_action),
    version: int(r.version),
    conflict: Boolean(r.conflict),
    attemptCount: int(r.attempt_count),
    firstSeenAt: date(r.first_seen_at),
    lastAttemptAt: date(r.last_attempt_at),
    statusSince: date(r.status_since),
    stallAt: dateOrNull(r.stall_at),
    notBefore: dateOrNull(r.not_before),
    assignee: textOrNull(r.assignee),
    userMessage: textOrNull(r.user_message),
    lastCode: textOrNull(r.last_code),
    resolution: json(r.resolution) as never,
    updatedAt: date(r.updated_at),
    runtime: { name: text(r.runtime) },
  };
}

function attemptOf(r: Raw, light: boolean): InvocationRowWithHistory["attempts"][number] {
  return {
    invocationUid: text(r.invocation_uid),
    runtimeId: text(r.runtime_id),
    eventKey: text(r.event_key),
    eventId: textOrNull(r.event_id),
    seq: int(r.seq),
    attemptId: textOrNull(r.attempt_id),
    attemptNo: intOrNull(r.attempt_no),
    phase: text(r.phase),
    at: date(r.at),
    receivedAt: date(r.received_at),
    tool: text(r.tool),
    effectClass: textOrNull(r.effect_class),
    idempotencyKey: textOrNull(r.idempotency_key),
    budgetLeftS: intOrNull(r.budget_left_s),
    argsDigest: textOrNull(r.args_digest),
    dialect: text(r.dialect),
    wrapperDialect: textOrNull(r.wrapper_dialect),
    outcome: text(r.outcome),
    commitState: text(r.commit_state),
    code: textOrNull(r.code),
    category: textOrNull(r.category),
    retryDirective: text(r.retry_directive),
    notBefore: dateOrNull(r.not_before),
    maxAttemptsRemaining: intOrNull(r.max_attempts_remaining),
    nextAction: text(r.next_action),
    dispatchStage: textOrNull(r.dispatch_stage),
    probeResult: textOrNull(r.probe_result),
    userMessage: textOrNull(r.user_message),
    items: json(r.items) as never,
    ignored: json(r.ignored) as never,
    ...(light ? {} : { safeDetails: json(r.safe_details) as never, agentMessage: textOrNull(r.agent_message), envelope: json(r.envelope) as never }),
  };
}

function actionOf(r: Raw): InvocationRowWithHistory["actions"][number] {
  return {
    id: text(r.id),
    invocationUid: text(r.invocation_uid),
    seq: int(r.seq),
    action: text(r.action),
    actor: text(r.actor),
    at: date(r.at),
    fromStatus: text(r.from_status),
    toStatus: text(r.to_status),
    note: textOrNull(r.note),
    payload: json(r.payload) as never,
  };
}

type InvocationRow = Omit<InvocationRowWithHistory, "attempts" | "actions">;

/** One invocation row, in a runtime or (without one) the first of any. */
export async function readInvocationRow(db: Db, runtimeId: string | undefined, invocationId: string): Promise<InvocationRow | null> {
  const [row] = await db.driver.query<Raw>(INVOCATION, [invocationId, runtimeId ?? null], { prepareAs: "settle_read_invocation" });
  return row ? invocationOf(row) : null;
}

/** Where a page of attempts ends: the order key of its oldest attempt. */
export type AttemptCursor = { attempt: number; at: string; phase: number; received_at: string; event_key: string };

export function encodeAttemptCursor(c: AttemptCursor): string {
  return Buffer.from(JSON.stringify([c.attempt, c.at, c.phase, c.received_at, c.event_key])).toString("base64url");
}

/** A cursor this API handed out, or null for anything else. */
export function decodeAttemptCursor(cursor: string): AttemptCursor | null {
  try {
    const [attempt, at, phase, receivedAt, eventKey] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    const time = (v: unknown) => typeof v === "string" && /^\d{4}-\d\d-\d\dT/.test(v) && !Number.isNaN(Date.parse(v));
    if (!Number.isInteger(attempt) || !Number.isInteger(phase) || !time(at) || !time(receivedAt) || typeof eventKey !== "string") return null;
    return { attempt: attempt as number, at: at as string, phase: phase as number, received_at: receivedAt as string, event_key: eventKey };
  } catch {
    return null;
  }
}

const phaseOrder: Record<string, number> = { intent: 0, outcome: 1, probe: 2 };

/**
 * The latest `limit` attempts of an invocation (before `before`, when given),
 * in the order the API shows them, how many it has in all, and the cursor of
 * the page before, if there is one.
 */
export async function readAttemptsPage(
  db: Db,
  invocation: { id: string; runtimeId: string },
  options: { limit: number; before?: AttemptCursor },
): Promise<{ attempts: InvocationRowWithHistory["attempts"]; total: number; earlier: string | null }> {
  const b = options.before;
  const [rows, counted] = await Promise.all([
    db.driver.query<Raw>(
      `SELECT ${attemptColumns(false)} FROM attempts
        WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid
          AND ($4::int IS NULL OR (${ATTEMPT_ORDER.join(", ")}) < ($4::int, $5::timestamptz, $6::int, $7::timestamptz, $8::text))
        ORDER BY ${ATTEMPT_ORDER.map((k) => `${k} DESC`).join(", ")}
        LIMIT $3::int`,
      [invocation.runtimeId, invocation.id, options.limit + 1, b?.attempt ?? null, b?.at ?? null, b?.phase ?? null, b?.received_at ?? null, b?.event_key ?? null],
      { prepareAs: "settle_read_attempts_page" },
    ),
    db.driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid`, [invocation.runtimeId, invocation.id], {
      prepareAs: "settle_count_attempts",
    }),
  ]);
  const page = rows.slice(0, options.limit).map((r) => attemptOf(r, false)).reverse();
  const oldest = page[0];
  const earlier =
    rows.length > options.limit && oldest
      ? encodeAttemptCursor({ attempt: oldest.attemptNo ?? 0, at: oldest.at.toISOString(), phase: phaseOrder[oldest.phase] ?? 2, received_at: oldest.receivedAt.toISOString(), event_key: oldest.eventKey })
      : null;
  return { attempts: page, total: Number(counted[0]?.n ?? 0), earlier };
}

/** The audit trail of one invocation, by seq. */
export async function readActions(db: Db, uid: string): Promise<InvocationRowWithHistory["actions"]> {
  const rows = await db.driver.query<Raw>(
    `SELECT id::text, invocation_uid::text, seq, action, actor, at, from_status, to_status, note, payload
       FROM invocation_actions WHERE invocation_uid = $1::uuid ORDER BY seq`,
    [uid],
    { prepareAs: "settle_read_actions" },
  );
  return rows.map(actionOf);
}

/** One runtime's task: its invocations, first seen first, without attempts or actions. */
export async function readTaskInvocationRows(db: Db, runtimeId: string, taskId: string): Promise<InvocationRow[]> {
  const rows = await db.prisma.$queryRawUnsafe<Raw[]>(INVOCATIONS, runtimeId, taskId);
  return rows.map(invocationOf);
}

/** The attempts and actions (by seq) of these invocations. `light` leaves out envelopes, safe details and agent messages. */
export async function readHistories(db: Db, rows: InvocationRow[], light: boolean): Promise<InvocationRowWithHistory[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // Every row here is one runtime's (a task's invocations): the lookup names it, as the index does.
  const [attempts, actions] = await Promise.all([
    db.prisma.$queryRawUnsafe<Raw[]>(`SELECT ${attemptColumns(light)} FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = ANY($2::uuid[])`, rows[0]!.runtimeId, ids),
    db.prisma.$queryRawUnsafe<Raw[]>(
      `SELECT id::text, invocation_uid::text, seq, action, actor, at, from_status, to_status, note, payload
         FROM invocation_actions WHERE invocation_uid = ANY($1::uuid[]) ORDER BY seq`,
      ids,
    ),
  ]);
  const byId = new Map(rows.map((r) => [r.id, { ...r, attempts: [], actions: [] } as InvocationRowWithHistory]));
  for (const a of attempts) byId.get(text(a.invocation_uid))?.attempts.push(attemptOf(a, light));
  for (const a of actions) byId.get(text(a.invocation_uid))?.actions.push(actionOf(a));
  return [...byId.values()];
}

/** One runtime's task: its invocations (first seen first) with their attempts and actions. */
export async function readTaskInvocations(db: Db, runtimeId: string, taskId: string, light: boolean): Promise<InvocationRowWithHistory[]> {
  return readHistories(db, await readTaskInvocationRows(db, runtimeId, taskId), light);
}
