import "server-only";
import type { Db } from "../db/client";
import {
  findTask,
  toInvocationView,
  toSummary,
  type InvocationSummary,
  type InvocationView,
  type Lookup,
  type ResolvedTask,
  type Scope,
  type TaskView,
} from "./read";
import { loadPolicies } from "../policies/policies";
import { compareRelevance, countNeedingPerson, TASK_PAGE_SIZE } from "./task-order";
import { buildTimeline, type TimelineEvent } from "./timeline-builder";
import { selectHistories, selectTaskInvocationRows, selectTaskInvocations } from "./queries";
import { selectTaskGuardRefusals } from "./guard-refusals";
import type { TaskGuardRefusal } from "./schemas";

export type TaskPageData = {
  task: ResolvedTask["task"];
  total: number;
  need_person: number;
  /** The first page, in the order the page lists them. */
  rows: InvocationSummary[];
  /** The same invocations with their attempts (no envelopes) and actions, for the chart. */
  invocations: InvocationView[];
  /** Calls of the task the guard refused (a run asking again for a committed intent, a possible duplicate). */
  refusals: TaskGuardRefusal[];
};

export async function findTaskPage(
  db: Db,
  scope: Scope,
  taskId: string,
  runtime: string | undefined,
  now: Date,
): Promise<Lookup<TaskPageData>> {
  const found = await findTask(db, scope, taskId, { runtime });
  if (found.kind !== "found") return found;
  const all = await selectTaskInvocationRows(db, found.value.runtimeId, taskId);
  const ranked = all
    .map((row) => ({ row, summary: toSummary(row, now) }))
    .sort((a, b) => compareRelevance(a.summary, b.summary));
  const first = ranked.slice(0, TASK_PAGE_SIZE);
  const [histories, policies, refusals] = await Promise.all([
    selectHistories(
      db,
      first.map((r) => r.row),
      true,
    ),
    loadPolicies(db.driver),
    selectTaskGuardRefusals(db, found.value.runtimeId, taskId),
  ]);
  return {
    kind: "found",
    value: {
      task: found.value.task,
      total: all.length,
      need_person: countNeedingPerson(ranked.map((r) => r.summary)),
      rows: first.map((r) => r.summary),
      invocations: histories.map((h) => toInvocationView(h, policies, now)),
      refusals,
    },
  };
}

export type TaskTimelineData = { task: TaskView; invocations: InvocationView[] };

/**
 * A task and all its invocations with their attempts and actions, for its
 * whole timeline; `light` leaves out envelopes, safe details and agent
 * messages (null, {} and null).
 */
export async function findTaskTimeline(
  db: Db,
  scope: Scope,
  taskId: string,
  runtime?: string,
  now = new Date(),
  light = false,
): Promise<Lookup<TaskTimelineData>> {
  const found = await findTask(db, scope, taskId, { runtime });
  if (found.kind !== "found") return found;
  const [rows, policies, refusals] = await Promise.all([
    selectTaskInvocations(db, found.value.runtimeId, taskId, light),
    loadPolicies(db.driver),
    selectTaskGuardRefusals(db, found.value.runtimeId, taskId),
  ]);
  const invocations = rows.map((r) => toInvocationView(r, policies, now));
  const summaries = invocations.map(
    ({
      attempts: _a,
      attempts_total: _t,
      attempts_earlier: _e,
      actions: _b,
      sla: _c,
      approvals: _d,
      duplicate_refusals: _r,
      guard_refusals: _gr,
      runbook: _k,
      arguments_edit: _g,
      ...summary
    }) => summary,
  );
  return {
    kind: "found",
    value: { task: { ...found.value.task, invocations: summaries, guard_refusals: refusals }, invocations },
  };
}

export type StoryLane = { invocation_id: string; tool: string; runtime: string };
export type TaskStory = {
  start: string;
  end: string;
  now: string;
  total: number;
  lanes: StoryLane[];
  events: TimelineEvent[];
};

/** The first `limit` events of a task's whole timeline, oldest first, without envelopes; null when the task is not one the caller can see. */
export async function getTaskStory(
  db: Db,
  scope: Scope,
  taskId: string,
  runtime: string | undefined,
  limit: number,
  stallWindowS: number,
  now = new Date(),
): Promise<TaskStory | null> {
  const found = await findTaskTimeline(db, scope, taskId, runtime, now, true);
  if (found.kind !== "found") return null;
  const timeline = buildTimeline(found.value.invocations, { now, stallWindowS });
  return {
    start: timeline.start,
    end: timeline.end,
    now: timeline.now,
    total: timeline.events.length,
    lanes: timeline.lanes.map(({ invocation: i }) => ({
      invocation_id: i.invocation_id,
      tool: i.tool,
      runtime: i.runtime,
    })),
    events: timeline.events.slice(0, limit),
  };
}
