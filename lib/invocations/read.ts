import type { z } from "zod";
import type { attemptPageSchema, attemptSchema, invocationSchema, invocationSummarySchema, ListQuery, taskSchema } from "../http/schemas";
import type { Db } from "../db/client";
import type { Prisma as P } from "../db/generated/client";
import { effectiveStatus, type InvocationStatus, type StoredStatus } from "../outcome/status";
import type { Resolution } from "../outcome/lifecycle";
import { loadPolicies, resolvePolicy, type PolicySet } from "../policies/policies";
import { ApiError } from "../errors";
import { decodeTimeIdCursor, encodeTimeIdCursor, NOT_A_CURSOR } from "../db/cursor";
import { approvalsOf, slaOf } from "../outcome/sla";
import { decodeAttemptCursor, readActions, readAttemptsPage, readInvocationRow } from "./timeline-read";

// Reading invocations and tasks in the shape of SPEC §8. `stalled` is
// computed here, at read time, so it shows the moment the window passes.

export type Scope = { runtimeId?: string };
export type InvocationSummary = z.infer<typeof invocationSummarySchema>;
export type InvocationView = z.infer<typeof invocationSchema>;
export type TaskView = z.infer<typeof taskSchema>;

type Row = Omit<P.InvocationGetPayload<{ include: { runtime: { select: { name: true } } } }>, "fold">;
type AttemptRow = P.AttemptGetPayload<object>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toSummary(row: Row, now = new Date()): InvocationSummary {
  const status = effectiveStatus(row.status as StoredStatus, row.stallAt, now);
  return {
    invocation_id: row.invocationId,
    task_id: row.taskId,
    runtime: row.runtime.name,
    tool: row.tool,
    effect_class: row.effectClass,
    idempotency_key: row.idempotencyKey,
    status,
    commit_state: row.commitState as InvocationSummary["commit_state"],
    // A stalled dispatch is an unknown outcome: verify before anything else.
    next_action: status === "stalled" ? "verify_operation" : (row.nextAction as InvocationSummary["next_action"]),
    version: row.version,
    conflict: row.conflict,
    attempt_count: row.attemptCount,
    first_seen_at: row.firstSeenAt.toISOString(),
    last_attempt_at: row.lastAttemptAt.toISOString(),
    status_since: (status === "stalled" ? row.stallAt! : row.statusSince).toISOString(),
    stall_at: iso(row.stallAt),
    not_before: iso(row.notBefore),
    assignee: row.assignee,
    user_message: row.userMessage,
    resolution: (row.resolution as Resolution | null) ?? null,
  };
}

const phaseRank = { intent: 0, outcome: 1, probe: 2 } as Record<string, number>;

/** An attempt row as the API shows it; the task page may leave out the heavy columns (null, {} and null). */
type AttemptInput = Omit<AttemptRow, "envelope" | "safeDetails" | "agentMessage" | "ignored"> & Partial<Pick<AttemptRow, "envelope" | "safeDetails" | "agentMessage" | "ignored">>;

export function toAttempt(a: AttemptInput): z.infer<typeof attemptSchema> {
  return {
    event_id: a.eventId ?? a.eventKey,
    attempt_id: a.attemptId,
    attempt: a.attemptNo,
    phase: a.phase as never,
    at: a.at.toISOString(),
    received_at: a.receivedAt.toISOString(),
    budget_left_s: a.budgetLeftS,
    dialect: a.dialect as never,
    wrapper_dialect: a.wrapperDialect as never,
    outcome: a.outcome as never,
    commit_state: a.commitState as never,
    code: a.code,
    category: a.category as never,
    retry: { directive: a.retryDirective as never, not_before: iso(a.notBefore), max_attempts_remaining: a.maxAttemptsRemaining },
    next_action: a.nextAction as never,
    dispatch_stage: a.dispatchStage as never,
    probe_result: a.probeResult as never,
    safe_details: (a.safeDetails ?? {}) as Record<string, unknown>,
    agent_message: a.agentMessage ?? null,
    user_message: a.userMessage,
    items: (a.items ?? []) as never,
    envelope: a.envelope ?? null,
    ignored: (a.ignored ?? []) as never,
  };
}

type ActionRow = P.ActionGetPayload<object>;
export type InvocationRowWithHistory = Row & { attempts: AttemptInput[]; actions: ActionRow[]; attemptsTotal?: number; attemptsEarlier?: string | null };

/** The SPEC §8 invocation: summary, attempts in the fold's order, audit trail, and what its policy means for it now. */
export function toInvocationView(row: InvocationRowWithHistory, policies: PolicySet, now = new Date()): InvocationView {
  const attempts = [...row.attempts].sort(
    (a, b) =>
      (a.attemptNo ?? 0) - (b.attemptNo ?? 0) ||
      a.at.getTime() - b.at.getTime() ||
      (phaseRank[a.phase] ?? 0) - (phaseRank[b.phase] ?? 0) ||
      a.receivedAt.getTime() - b.receivedAt.getTime(),
  );
  const summary = toSummary(row, now);
  const actions = [...row.actions]
    .sort((a, b) => a.seq - b.seq)
    .map((a) => ({
      action: a.action,
      actor: a.actor,
      at: a.at.toISOString(),
      from_status: a.fromStatus as InvocationStatus,
      to_status: a.toStatus as InvocationStatus,
      note: a.note,
    }));
  const policy = resolvePolicy(policies, row.effectClass);
  return {
    ...summary,
    attempts: attempts.map(toAttempt),
    attempts_total: row.attemptsTotal ?? attempts.length,
    attempts_earlier: row.attemptsEarlier ?? null,
    actions,
    sla: slaOf(summary, policy, now),
    approvals: approvalsOf({ ...summary, actions }, policy),
  };
}

/** How many of an invocation's attempts its view carries: the latest ones; older pages come from the attempts API. */
export const INVOCATION_ATTEMPTS_SHOWN = 200;

export async function getInvocation(db: Db, scope: Scope, invocationId: string, now = new Date()): Promise<InvocationView | null> {
  const [row, policies] = await Promise.all([readInvocationRow(db, scope.runtimeId, invocationId), loadPolicies(db.prisma)]);
  if (!row) return null;
  const [page, actions] = await Promise.all([readAttemptsPage(db, row, { limit: INVOCATION_ATTEMPTS_SHOWN }), readActions(db, row.id)]);
  return toInvocationView({ ...row, attempts: page.attempts, actions, attemptsTotal: page.total, attemptsEarlier: page.earlier }, policies, now);
}

export type AttemptPage = z.infer<typeof attemptPageSchema>;

/** A page of an invocation's attempts before `before` (a cursor from `attempts_earlier` or a page's `earlier`); null when there is no such invocation. */
export async function listAttempts(db: Db, scope: Scope, invocationId: string, query: { before?: string; limit: number }): Promise<AttemptPage | null> {
  const before = query.before === undefined ? undefined : decodeAttemptCursor(query.before);
  if (before === null) throw new ApiError("INVALID_REQUEST", `before: ${NOT_A_CURSOR}.`, { path: "before" });
  const row = await readInvocationRow(db, scope.runtimeId, invocationId);
  if (!row) return null;
  const page = await readAttemptsPage(db, row, { limit: query.limit, before });
  return { items: page.attempts.map(toAttempt), total: page.total, earlier: page.earlier };
}

export async function getTask(db: Db, scope: Scope, taskId: string, now = new Date()): Promise<TaskView | null> {
  const task = await db.prisma.task.findFirst({
    where: { taskId, ...(scope.runtimeId ? { runtimeId: scope.runtimeId } : {}) },
    include: { runtime: { select: { name: true } } },
    orderBy: { lastSeenAt: "desc" },
  });
  if (!task) return null;
  const invocations = await db.prisma.invocation.findMany({
    where: { runtimeId: task.runtimeId, taskId },
    include: { runtime: { select: { name: true } } },
    orderBy: [{ firstSeenAt: "asc" }, { invocationId: "asc" }],
  });
  return {
    task_id: task.taskId,
    runtime: task.runtime.name,
    first_seen_at: task.firstSeenAt.toISOString(),
    last_seen_at: task.lastSeenAt.toISOString(),
    invocations: invocations.map((r) => toSummary(r, now)),
  };
}

function statusWhere(statuses: InvocationStatus[], now: Date): P.InvocationWhereInput {
  const stored = statuses.filter((s) => s !== "stalled" && s !== "pending");
  const or: P.InvocationWhereInput[] = [];
  if (stored.length > 0) or.push({ status: { in: stored } });
  if (statuses.includes("stalled")) or.push({ status: "pending", stallAt: { lte: now } });
  if (statuses.includes("pending")) or.push({ status: "pending", OR: [{ stallAt: null }, { stallAt: { gt: now } }] });
  return { OR: or };
}


export async function listInvocations(db: Db, scope: Scope, query: ListQuery, now = new Date()) {
  const and: P.InvocationWhereInput[] = [];
  if (query.status) and.push(statusWhere(query.status, now));
  if (query.tool) and.push({ tool: query.tool });
  if (query.effect_class) and.push({ effectClass: { in: query.effect_class } });
  if (query.q) {
    and.push({
      OR: [
        { taskId: { contains: query.q, mode: "insensitive" } },
        { invocationId: { contains: query.q, mode: "insensitive" } },
        { idempotencyKey: { contains: query.q, mode: "insensitive" } },
      ],
    });
  }
  if (query.cursor) {
    const c = decodeTimeIdCursor(query.cursor);
    if (!c) throw new ApiError("INVALID_REQUEST", `cursor: ${NOT_A_CURSOR}.`, { path: "cursor" });
    and.push({ OR: [{ lastAttemptAt: { lt: c.at } }, { lastAttemptAt: c.at, id: { lt: c.id } }] });
  }
  // Newest first, one runtime at a time by (runtime_id, last_attempt_at), then merged: a list across
  // runtimes fans out rather than reading one index that spans them all (shared/notes/scale-out.md).
  const runtimeIds = scope.runtimeId
    ? [scope.runtimeId]
    : (await db.prisma.runtime.findMany({ where: query.runtime ? { name: query.runtime } : {}, select: { id: true } })).map((r) => r.id);
  if (scope.runtimeId && query.runtime) and.push({ runtime: { name: query.runtime } });
  const perRuntime = await Promise.all(
    runtimeIds.map((runtimeId) =>
      db.prisma.invocation.findMany({
        where: { AND: [...and, { runtimeId }] },
        include: { runtime: { select: { name: true } } },
        orderBy: [{ lastAttemptAt: "desc" }, { id: "desc" }],
        take: query.limit + 1,
      }),
    ),
  );
  const newestFirst = (a: { lastAttemptAt: Date; id: string }, b: { lastAttemptAt: Date; id: string }) =>
    b.lastAttemptAt.getTime() - a.lastAttemptAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  const rows = perRuntime.flat().sort(newestFirst).slice(0, query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => toSummary(r, now)),
    next_cursor: rows.length > query.limit && last ? encodeTimeIdCursor(last.lastAttemptAt, last.id) : null,
  };
}
