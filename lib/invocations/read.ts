import "server-only";
import type { Scope } from "../identity/principal";
import type { z } from "zod";
import type {
  attemptPageSchema,
  attemptSchema,
  invocationSchema,
  invocationSummarySchema,
  ListQuery,
  taskSchema,
  GuardRefusal,
} from "./schemas";
import { selectGuardRefusals, selectTaskGuardRefusals } from "./guard-refusals";
import type { Db } from "../db/client";
import type { Prisma as P } from "../db/generated/client";
import { effectiveStatus, type InvocationStatus, type StoredStatus } from "../outcome/status";
import type { Resolution } from "../outcome/lifecycle";
import type { DuplicateReview } from "../outcome/duplicates";
import { loadPolicies, resolvePolicy, type PolicySet } from "../policies/policies";
import { ApiError } from "../errors";
import { decodeTimeIdCursor, encodeTimeIdCursor, NOT_A_CURSOR } from "../db/cursor";
import { approvalsOf, slaOf } from "../outcome/sla";
import { phaseRank } from "../outcome/fold";
import { loadToolCatalog } from "../catalog/load";
import { entryFor, type ToolCatalogEntry } from "../catalog/effect-class";
import { renderRunbookUrl } from "../catalog/templates";
import { actionDetails, argumentsEditView, type StoredEdit } from "./edit-view";
import {
  decodeAttemptCursor,
  selectInvocationRows,
  selectTaskRows,
  selectActions,
  selectAttemptsPage,
  selectDuplicateRefusals,
  type DuplicateRefusalRow,
  selectInvocationList,
  selectTaskInvocationRows,
  selectRuntimeId,
  type InvocationRow,
  type RowScope,
  type TaskRow,
} from "./queries";

export type { Scope };
export type InvocationSummary = z.infer<typeof invocationSummarySchema>;
export type InvocationView = z.infer<typeof invocationSchema>;
export type TaskView = z.infer<typeof taskSchema>;

type Row = Omit<P.InvocationGetPayload<{ include: { runtime: { select: { name: true } } } }>, "fold"> & {
  /** From the stored fold: a record after the approval reported other arguments than those approved. */
  argsMismatch?: boolean;
  /** From the stored fold: edited arguments pending approval, else the last approved ones (approve with edits). */
  argumentsEdit?: StoredEdit | null;
};
type AttemptRow = P.AttemptGetPayload<object>;
/** A row's place in its hash chain (lib/chain): never part of the API's answer. */
type ChainColumns = "chainSeq" | "chainContent" | "chainPrev";

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
    args_digest: row.argsDigest,
    summary: row.summary,
    ran_with_other_arguments: row.argsMismatch ?? false,
    possible_duplicate_of: row.possibleDuplicateOf,
    duplicate_review: (row.duplicateReview as DuplicateReview | null) ?? null,
    arguments_review: (row.argsReview as "open" | "checked" | null) ?? null,
  };
}

const phaseOrder = phaseRank as Record<string, number>;

/** An attempt row as the API shows it; the task page may leave out the heavy columns (null, {} and null). */
type AttemptInput = Omit<
  AttemptRow,
  "envelope" | "safeDetails" | "agentMessage" | "ignored" | "arguments" | "shelf" | ChainColumns
> &
  Partial<Pick<AttemptRow, "envelope" | "safeDetails" | "agentMessage" | "ignored" | "arguments">>;

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
    retry: {
      directive: a.retryDirective as never,
      not_before: iso(a.notBefore),
      max_attempts_remaining: a.maxAttemptsRemaining,
    },
    next_action: a.nextAction as never,
    dispatch_stage: a.dispatchStage as never,
    probe_result: a.probeResult as never,
    safe_details: (a.safeDetails ?? {}) as Record<string, unknown>,
    agent_message: a.agentMessage ?? null,
    user_message: a.userMessage,
    items: (a.items ?? []) as never,
    envelope: a.envelope ?? null,
    args_digest: a.argsDigest,
    arguments: a.arguments ?? null,
    ignored: (a.ignored ?? []) as never,
  };
}

type ActionRow = Omit<P.ActionGetPayload<object>, ChainColumns>;
export type InvocationRowWithHistory = Row & {
  attempts: AttemptInput[];
  actions: ActionRow[];
  attemptsTotal?: number;
  attemptsEarlier?: string | null;
  duplicateRefusals?: DuplicateRefusalRow[];
  guardRefusals?: GuardRefusal[];
  /** Its tool's catalog entry, for where to check it (the invocation page reads it; a task page does not). */
  catalogEntry?: Pick<ToolCatalogEntry, "runbook_url" | "runbook"> | null;
};

/** The docs/outcome-model.md §8 invocation: summary, attempts in the fold's order, audit trail, and what its policy means for it now. */
export function toInvocationView(row: InvocationRowWithHistory, policies: PolicySet, now = new Date()): InvocationView {
  const attempts = [...row.attempts].sort(
    (a, b) =>
      (a.attemptNo ?? 0) - (b.attemptNo ?? 0) ||
      a.at.getTime() - b.at.getTime() ||
      (phaseOrder[a.phase] ?? 0) - (phaseOrder[b.phase] ?? 0) ||
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
      ...actionDetails(a.payload),
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
    runbook: runbookOf(row, attempts),
    arguments_edit: argumentsEditView(row.argumentsEdit),
    duplicate_refusals: (row.duplicateRefusals ?? []).map((d) => ({
      idempotency_key: d.idempotencyKey,
      task_id: d.taskId,
      refused: d.refused,
      last_at: d.lastAt.toISOString(),
      cleared_by: d.clearedBy,
      cleared_at: iso(d.clearedAt),
    })),
    guard_refusals: row.guardRefusals ?? [],
  };
}

/** Where to check the call: its catalog entry's link, filled from its latest arguments, and steps. */
function runbookOf(row: InvocationRowWithHistory, attempts: readonly AttemptInput[]): InvocationView["runbook"] {
  const entry = row.catalogEntry;
  if (!entry || (!entry.runbook_url && !entry.runbook)) return null;
  const args = attempts.findLast((a) => a.arguments !== null && a.arguments !== undefined)?.arguments ?? null;
  const link = entry.runbook_url
    ? renderRunbookUrl(entry.runbook_url, { tool: row.tool, idempotencyKey: row.idempotencyKey, args })
    : null;
  return { url: link?.url ?? null, host: link?.host ?? null, steps: entry.runbook ?? null };
}

/** How many of an invocation's attempts its view carries: the latest ones; older pages come from the attempts API. */
export const INVOCATION_ATTEMPTS_SHOWN = 200;

/** What a page finds for an id: the one the caller means, or the runtimes to choose from when the id is in several. */
export type Lookup<T> = { kind: "found"; value: T } | { kind: "ambiguous"; runtimes: string[] } | { kind: "missing" };

/** How many runtimes a page offers to choose from. */
const RUNTIMES_OFFERED = 20;

const rowScope = (scope: Scope, runtime?: string): RowScope => ({ runtimeId: scope.runtimeId, runtime });

function lookupOf<R extends { runtime: string | { name: string } }>(rows: R[], runtime: string | undefined): Lookup<R> {
  if (!runtime && rows.length > 1)
    return {
      kind: "ambiguous",
      runtimes: rows.map((r) => (typeof r.runtime === "string" ? r.runtime : r.runtime.name)).sort(),
    };
  return rows[0] ? { kind: "found", value: rows[0] } : { kind: "missing" };
}

/** The docs/outcome-model.md §8 view of a row the lookup found: the latest attempts, the audit trail, the policy in effect. */
async function invocationView(db: Db, row: InvocationRow, now: Date): Promise<InvocationView> {
  const [page, actions, policies, duplicateRefusals, guardRefusals, catalog] = await Promise.all([
    selectAttemptsPage(db, row, { limit: INVOCATION_ATTEMPTS_SHOWN }),
    selectActions(db, row.id),
    loadPolicies(db.driver),
    selectDuplicateRefusals(db, row),
    selectGuardRefusals(db, row),
    loadToolCatalog(db, row.runtimeId),
  ]);
  return toInvocationView(
    {
      ...row,
      attempts: page.attempts,
      actions,
      attemptsTotal: page.total,
      attemptsEarlier: page.earlier,
      duplicateRefusals,
      guardRefusals,
      catalogEntry: entryFor(catalog, row.tool),
    },
    policies,
    now,
  );
}

/** The scope narrowed to one runtime by name; null when that runtime is not one the caller can see. */
export async function getRuntimeScope(db: Db, scope: Scope, runtime: string | undefined): Promise<Scope | null> {
  if (!runtime) return scope;
  const id = await selectRuntimeId(db, runtime);
  if (!id || (scope.runtimeId && scope.runtimeId !== id)) return null;
  return { runtimeId: id };
}

/** How a one-thing read may be narrowed: to the runtime named (when several use the id), and the moment it is read at. */
export type GetOptions = { runtime?: string; now?: Date };

/** An invocation in the caller's scope, in the runtime named; without one, the first of any runtime using the id (as the API always did). */
export async function getInvocation(
  db: Db,
  scope: Scope,
  invocationId: string,
  { runtime, now = new Date() }: GetOptions = {},
): Promise<InvocationView | null> {
  const [row] = await selectInvocationRows(db, rowScope(scope, runtime), invocationId, 1);
  return row ? invocationView(db, row, now) : null;
}

/** The stored row of an invocation in the caller's scope (as getInvocation finds it), for readers of its whole history (lib/evidence). */
export async function getInvocationRow(
  db: Db,
  scope: Scope,
  invocationId: string,
  { runtime }: Pick<GetOptions, "runtime"> = {},
): Promise<InvocationRow | null> {
  return (await selectInvocationRows(db, rowScope(scope, runtime), invocationId, 1))[0] ?? null;
}

/** The invocation page: one runtime's invocation, or the runtimes to choose from when the id is in several. */
export async function findInvocation(
  db: Db,
  scope: Scope,
  invocationId: string,
  { runtime, now = new Date() }: GetOptions = {},
): Promise<Lookup<InvocationView>> {
  const found = lookupOf(
    await selectInvocationRows(db, rowScope(scope, runtime), invocationId, runtime ? 1 : RUNTIMES_OFFERED),
    runtime,
  );
  return found.kind === "found" ? { kind: "found", value: await invocationView(db, found.value, now) } : found;
}

export type AttemptPage = z.infer<typeof attemptPageSchema>;

/** A page of an invocation's attempts before `before` (a cursor from `attempts_earlier` or a page's `earlier`); null when there is no such invocation. */
export async function listAttempts(
  db: Db,
  scope: Scope,
  invocationId: string,
  query: { before?: string; limit: number },
): Promise<AttemptPage | null> {
  const before = query.before === undefined ? undefined : decodeAttemptCursor(query.before);
  if (before === null) throw new ApiError("INVALID_REQUEST", `before: ${NOT_A_CURSOR}.`, { path: "before" });
  const [row] = await selectInvocationRows(db, rowScope(scope), invocationId, 1);
  if (!row) return null;
  const page = await selectAttemptsPage(db, row, { limit: query.limit, before });
  return { items: page.attempts.map(toAttempt), total: page.total, earlier: page.earlier };
}

/** Which runtime's task the caller means, and the task without its invocations. */
export type ResolvedTask = {
  runtimeId: string;
  task: { task_id: string; runtime: string; first_seen_at: string; last_seen_at: string };
};

const resolved = (t: TaskRow): ResolvedTask => ({
  runtimeId: t.runtimeId,
  task: {
    task_id: t.taskId,
    runtime: t.runtime,
    first_seen_at: t.firstSeenAt.toISOString(),
    last_seen_at: t.lastSeenAt.toISOString(),
  },
});

async function taskView(db: Db, t: TaskRow, now: Date): Promise<TaskView> {
  const [invocations, refusals] = await Promise.all([
    selectTaskInvocationRows(db, t.runtimeId, t.taskId),
    selectTaskGuardRefusals(db, t.runtimeId, t.taskId),
  ]);
  return { ...resolved(t).task, invocations: invocations.map((r) => toSummary(r, now)), guard_refusals: refusals };
}

/** A task in the caller's scope, in the runtime named; without one, the one seen last of any runtime using the id (as the API always did). */
export async function getTask(
  db: Db,
  scope: Scope,
  taskId: string,
  { runtime, now = new Date() }: GetOptions = {},
): Promise<TaskView | null> {
  const [task] = await selectTaskRows(db, rowScope(scope, runtime), taskId, 1);
  return task ? taskView(db, task, now) : null;
}

/** The task pages: which runtime's task the caller means, or the runtimes to choose from when the id is in several. */
export async function findTask(
  db: Db,
  scope: Scope,
  taskId: string,
  { runtime }: Pick<GetOptions, "runtime"> = {},
): Promise<Lookup<ResolvedTask>> {
  const found = lookupOf(
    await selectTaskRows(db, rowScope(scope, runtime), taskId, runtime ? 1 : RUNTIMES_OFFERED),
    runtime,
  );
  return found.kind === "found" ? { kind: "found", value: resolved(found.value) } : found;
}

export async function listInvocations(db: Db, scope: Scope, query: ListQuery, now = new Date()) {
  let after: { at: Date; id: string } | null = null;
  if (query.cursor) {
    after = decodeTimeIdCursor(query.cursor);
    if (!after) throw new ApiError("INVALID_REQUEST", `cursor: ${NOT_A_CURSOR}.`, { path: "cursor" });
  }
  // Newest first, one runtime at a time by (runtime_id, last_attempt_at), then merged: a list across
  // runtimes fans out rather than reading one index that spans them all (shared/notes/scale-out.md).
  const named = query.runtime ? await selectRuntimeId(db, query.runtime) : null;
  const runtimeIds = query.runtime
    ? named && (!scope.runtimeId || scope.runtimeId === named)
      ? [named]
      : []
    : scope.runtimeId
      ? [scope.runtimeId]
      : (await db.prisma.runtime.findMany({ select: { id: true } })).map((r) => r.id);
  const filter = {
    statuses: query.status,
    tool: query.tool,
    effectClasses: query.effect_class,
    q: query.q,
    after,
    now,
    limit: query.limit + 1,
  };
  const perRuntime = await Promise.all(runtimeIds.map((runtimeId) => selectInvocationList(db, runtimeId, filter)));
  const newestFirst = (a: { lastAttemptAt: Date; id: string }, b: { lastAttemptAt: Date; id: string }) =>
    b.lastAttemptAt.getTime() - a.lastAttemptAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  const rows = perRuntime
    .flat()
    .sort(newestFirst)
    .slice(0, query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => toSummary(r, now)),
    next_cursor: rows.length > query.limit && last ? encodeTimeIdCursor(last.lastAttemptAt, last.id) : null,
  };
}
