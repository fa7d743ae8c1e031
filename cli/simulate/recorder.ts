import { createHash } from "node:crypto";
import type { InvocationView } from "@/lib/invocations/read";
import type { InvocationStatus } from "@/lib/outcome/status";
import { tool as toolNamed, type Tool } from "./catalog";
import type { EnvelopeInput, Sent } from "./envelopes";
import type { Rng } from "./rng";

// The simulated runtime's write-ahead log: tasks, invocations and the records
// it sends for them, on a clock of its own placed within the last hour.

export type SimRecord = Record<string, unknown>;

export type Expected = { status: InvocationStatus };

/** What the runtime does once it has read Settle's answer about an invocation. */
export type FollowUp = (view: InvocationView) => { records: SimRecord[]; then?: FollowUp };

export type Check = {
  name: string;
  invocationIds: string[];
  /** Problems found; empty when the check passes. */
  verify: (views: Map<string, InvocationView>) => string[];
};

/**
 * The business system behind the tools. Every dispatch reaches it; whether an
 * effect lands depends on the failure played, and a receiver that
 * deduplicates by idempotency key applies a repeated key only once.
 */
export type World = {
  dispatch: (key: string, how?: { lands?: boolean; dedupe?: boolean }) => void;
  dispatches: (key: string) => number;
  effects: (key: string) => number;
};

export type PlannedInvocation = {
  invocationId: string;
  taskId: string;
  tool: Tool;
  key: string;
  scenario: string;
  expected: Expected;
  followUp?: FollowUp;
};

export type SimContext = {
  rng: Rng;
  runTag: string;
  /** Wall-clock time the plan is made at; every record's `at` is before it. */
  now: number;
  tasks: TaskLog[];
  world: World;
  invocations: PlannedInvocation[];
  checks: Check[];
  dialects: Map<string, number>;
};

export type TaskLog = {
  taskId: string;
  actor: string;
  clock: number;
  budgetS: number;
  startedAt: number;
  records: SimRecord[];
  count: number;
};

export type Inv = {
  id: string;
  /** false: the records carry no invocation_id and Settle derives it from the key. */
  explicitId: boolean;
  index: number;
  task: TaskLog;
  tool: Tool;
  key: string;
  argsDigest: string;
  planned: PlannedInvocation;
};

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** source article 002 (docs/outcome-model.md): the key is derived from the intent (task, actor, verb, target, slot), never from the payload. */
export function intentKey(taskId: string, actor: string, verb: string, target: string, slot = ""): string {
  return sha256(`${taskId}|${actor}|${verb}|${target}|${slot}`).slice(0, 32);
}

export function createWorld(): World {
  const dispatches = new Map<string, number>();
  const effects = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  return {
    dispatch: (key, how = {}) => {
      bump(dispatches, key);
      if (how.lands === false || (how.dedupe && effects.has(key))) return;
      bump(effects, key);
    },
    dispatches: (key) => dispatches.get(key) ?? 0,
    effects: (key) => effects.get(key) ?? 0,
  };
}

export function newTask(ctx: SimContext, prefix: string, actor: string, number: number, startedAt: number): TaskLog {
  const taskId = `${prefix}-${ctx.runTag}-${String(number).padStart(4, "0")}`;
  const task: TaskLog = {
    taskId,
    actor,
    clock: startedAt,
    startedAt,
    budgetS: ctx.rng.pick([120, 300, 600]),
    records: [],
    count: 0,
  };
  ctx.tasks.push(task);
  return task;
}

export function newInvocation(
  ctx: SimContext,
  task: TaskLog,
  toolName: string,
  scenario: string,
  options: { slot?: string; explicitId?: boolean } = {},
): Inv {
  const tool = toolNamed(toolName);
  task.count += 1;
  const key = intentKey(task.taskId, task.actor, tool.name, `${tool.target}:${task.taskId}`, options.slot);
  const explicitId = options.explicitId ?? ctx.rng.chance(0.5);
  const id = explicitId ? `inv-${ctx.runTag}-${ctx.rng.hex(8)}` : `${task.taskId}:${key}`;
  const planned: PlannedInvocation = {
    invocationId: id,
    taskId: task.taskId,
    tool,
    key,
    scenario,
    expected: { status: "succeeded" },
  };
  ctx.invocations.push(planned);
  return { id, explicitId, index: task.count, task, tool, key, argsDigest: `sha256:${sha256(`${key}|args`)}`, planned };
}

export function envelopeInput(ctx: SimContext, inv: Inv, attempt: number): EnvelopeInput {
  return {
    rng: ctx.rng,
    ref: attemptId(inv, attempt),
    tool: inv.tool.name,
    isRead: inv.tool.effect === "read",
    invocationId: inv.id,
  };
}

export const attemptId = (inv: Inv, attempt: number) => `${inv.task.taskId}-${inv.index}-a${attempt}`;
const iso = (ms: number) => new Date(ms).toISOString();

function base(inv: Inv, attempt: number, phase: string, at: number): SimRecord {
  return {
    event_id: `sim-${inv.task.taskId}:${inv.index}:a${attempt}:${phase}`,
    task_id: inv.task.taskId,
    ...(inv.explicitId ? { invocation_id: inv.id } : {}),
    attempt_id: attemptId(inv, attempt),
    attempt,
    tool: inv.tool.name,
    phase,
    at: iso(at),
    idempotency_key: inv.key,
    effect_class: inv.tool.effect,
  };
}

export function countDialect(ctx: SimContext, envelope: Sent): void {
  const label = envelope.wrapper ? `${envelope.dialect} in ${envelope.wrapper}` : envelope.dialect;
  ctx.dialects.set(label, (ctx.dialects.get(label) ?? 0) + 1);
}

/** Advances the task's clock by a few seconds, as a real call would take. */
export function tick(ctx: SimContext, task: TaskLog, minS = 1, maxS = 6): number {
  task.clock += ctx.rng.int(minS * 1000, maxS * 1000);
  return task.clock;
}

export function budgetLeft(task: TaskLog, at = task.clock): number {
  return Math.max(0, task.budgetS - Math.round((at - task.startedAt) / 1000));
}

export function intentRecord(inv: Inv, attempt: number, at: number, budgetLeftS: number): SimRecord {
  return { ...base(inv, attempt, "intent", at), budget_left_s: budgetLeftS, args_digest: inv.argsDigest };
}

export function outcomeRecord(ctx: SimContext, inv: Inv, attempt: number, at: number, envelope: Sent): SimRecord {
  countDialect(ctx, envelope);
  return { ...base(inv, attempt, "outcome", at), budget_left_s: budgetLeft(inv.task, at), envelope: envelope.envelope };
}

export function probeRecord(ctx: SimContext, inv: Inv, attempt: number, at: number, envelope: Sent): SimRecord {
  countDialect(ctx, envelope);
  return { ...base(inv, attempt, "probe", at), envelope: envelope.envelope };
}

/** Intent before dispatch, then the outcome a few seconds later: one transport attempt. */
export function attemptRecords(ctx: SimContext, inv: Inv, attempt: number, envelope: () => Sent): void {
  const started = tick(ctx, inv.task);
  inv.task.records.push(intentRecord(inv, attempt, started, budgetLeft(inv.task, started)));
  const finished = tick(ctx, inv.task);
  inv.task.records.push(outcomeRecord(ctx, inv, attempt, finished, envelope()));
}

/** A moment after Settle's last record for the invocation, for what the runtime does next. */
export function after(ctx: SimContext, view: InvocationView, minS = 20, maxS = 90): number {
  return Date.parse(view.last_attempt_at) + ctx.rng.int(minS * 1000, maxS * 1000);
}
