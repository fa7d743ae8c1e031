import * as envelopes from "./envelopes";
import {
  after,
  budgetLeft,
  countDialect,
  envelopeInput,
  intentRecord,
  newInvocation,
  outcomeRecord,
  tick,
  type Inv,
  type SimContext,
  type SimRecord,
  type TaskLog,
} from "./recorder";

// Runtime-side failures: source article 004 (docs/outcome-model.md)'s lost outcome evidence, a runtime that died
// after writing its intent, and source article 002 (docs/outcome-model.md)'s own attempt log.

/**
 * Seed 004's fault-injection test: the intent is written, the effect happens,
 * then appending the outcome evidence fails. The runtime reports that, and
 * dispatches again only if Settle says it may (it must not).
 */
export function playEvidenceFailure(ctx: SimContext, inv: Inv): boolean {
  const started = tick(ctx, inv.task);
  inv.task.records.push(intentRecord(inv, 1, started, budgetLeft(inv.task, started)));
  ctx.world.dispatch(inv.key);
  const failedAt = tick(ctx, inv.task, 2, 9);
  inv.task.records.push(outcomeRecord(ctx, inv, 1, failedAt, envelopes.evidenceFailed(inv.id)));
  inv.planned.scenario = "post-dispatch evidence failure";
  inv.planned.expected = { status: "outcome_unknown" };
  inv.planned.followUp = (view) => {
    const allowed =
      view.status === "retry_scheduled" ||
      view.next_action === "wait_and_retry" ||
      (view.status === "reconciled" && view.resolution?.commit_state === "not_committed");
    if (!allowed) return { records: [] };
    const start = after(ctx, view);
    // Idempotency of a refund is not known: a second dispatch is a second effect.
    ctx.world.dispatch(inv.key);
    return {
      records: [
        intentRecord(inv, 2, start, 30),
        outcomeRecord(ctx, inv, 2, start + 2_000, envelopes.success.seed002(envelopeInput(ctx, inv, 2))),
      ],
    };
  };
  return false;
}

/** The runtime wrote its intent and died: no outcome ever comes. Settle shows it stalled once the budget has passed. */
export function playStalled(ctx: SimContext, inv: Inv): boolean {
  const started = tick(ctx, inv.task);
  inv.task.records.push(intentRecord(inv, 1, started, ctx.rng.int(10, 45)));
  inv.planned.scenario = "stalled intent";
  inv.planned.expected = { status: "stalled" };
  return false;
}

/** An intent sent seconds ago with a long budget: still in flight. */
export function playInFlight(ctx: SimContext, inv: Inv, now: number): boolean {
  const started = now - ctx.rng.int(5_000, 30_000);
  inv.task.records.push(intentRecord(inv, 1, started, 1_800));
  inv.planned.scenario = "in flight";
  inv.planned.expected = { status: "pending" };
  return false;
}

/** source article 002 (docs/outcome-model.md) writes "05:12:04"; Settle places a time of day on the day it receives it, so only same-day times use that form. */
function startedField(at: number, now: number): string {
  const iso = new Date(at).toISOString();
  return iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10) ? iso.slice(11, 19) : iso;
}

/**
 * Seed 002's attempt log, one line per attempt written before the call and
 * the same line updated after it, sent as is: attempt 1 is refused before
 * anything is written, attempt 2's answer is lost and its probe finds it.
 */
export function playLogLines(ctx: SimContext, task: TaskLog, toolName: string, now: number): Inv {
  const inv = newInvocation(ctx, task, toolName, "source article 002 (docs/outcome-model.md) attempt log", {
    explicitId: false,
  });
  const line = (attempt: number, at: number): SimRecord => ({
    task: task.taskId,
    call: inv.tool.name,
    intent_key: inv.key,
    attempt,
    started: startedField(at, now),
    budget_left_s: budgetLeft(task, at),
  });
  const first = tick(ctx, task);
  const firstLine = line(1, first);
  task.records.push(firstLine, { ...firstLine, outcome: "retryable", effect_applied: "no" });
  const second = tick(ctx, task, 20, 40);
  const secondLine = line(2, second);
  ctx.world.dispatch(inv.key, { lands: false });
  ctx.world.dispatch(inv.key);
  task.records.push(secondLine, { ...secondLine, outcome: "unknown", probe: "found" });
  for (let i = 0; i < 2; i += 1)
    countDialect(ctx, { envelope: null, dialect: "seed002", wrapper: null, variant: "seed002 log line" });
  inv.planned.expected = { status: "reconciled" };
  return inv;
}
