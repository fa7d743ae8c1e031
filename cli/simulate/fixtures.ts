import * as envelopes from "./envelopes";
import {
  after,
  attemptRecords,
  budgetLeft,
  envelopeInput,
  intentRecord,
  newInvocation,
  outcomeRecord,
  probeRecord,
  tick,
  type FollowUp,
  type Inv,
  type SimContext,
} from "./recorder";

// Seed 002's "six failures worth injecting on purpose", played as a runtime
// that follows Settle's answers: it probes when told to verify, retries only
// when told it may, and waits as long as it is told to.

const mayVerify = (status: string, next: string) =>
  next === "verify_operation" && (status === "outcome_unknown" || status === "stalled");

/** Probe the business system by idempotency key, as Settle asks; if absent and Settle then allows it, retry with the same key. */
export function probeFollowUp(ctx: SimContext, inv: Inv, probeWorks = true): FollowUp {
  return (view) => {
    if (!mayVerify(view.status, view.next_action)) return { records: [] };
    const at = after(ctx, view);
    if (!probeWorks) return { records: [probeRecord(ctx, inv, 1, at, envelopes.probe.failed())] };
    const found = ctx.world.effects(inv.key) > 0;
    const probe = probeRecord(
      ctx,
      inv,
      1,
      at,
      found ? envelopes.probe.found(`${inv.task.taskId}-probe`) : envelopes.probe.absent(`${inv.task.taskId}-probe`),
    );
    if (found) return { records: [probe] };
    return {
      records: [probe],
      then: (settled) => {
        const allowed = settled.status === "reconciled" && settled.resolution?.commit_state === "not_committed";
        if (!allowed) return { records: [] };
        const start = after(ctx, settled, 5, 15);
        ctx.world.dispatch(inv.key);
        return {
          records: [
            intentRecord(inv, 2, start, 60),
            outcomeRecord(
              ctx,
              inv,
              2,
              start + ctx.rng.int(1000, 4000),
              envelopes.success.seed002(envelopeInput(ctx, inv, 2)),
            ),
          ],
        };
      },
    };
  };
}

/** 1. Kill mid-call: the effect lands, the connection drops. Expect unknown, a probe, then committed without a second effect. */
export function playKillMidCall(ctx: SimContext, inv: Inv, landed = true): boolean {
  ctx.world.dispatch(inv.key, { lands: landed });
  const variant = ctx.rng.pick([
    envelopes.unknown.seed002,
    envelopes.unknown.settle,
    envelopes.unknown.rfc9457,
    envelopes.unknown.mcpErrorText,
  ]);
  attemptRecords(ctx, inv, 1, () => variant(envelopeInput(ctx, inv, 1)));
  inv.planned.scenario = landed ? "kill mid-call, probe found" : "lost before the receiver, probe absent, retried";
  inv.planned.expected = { status: landed ? "reconciled" : "succeeded" };
  inv.planned.followUp = probeFollowUp(ctx, inv);
  return false;
}

/** An unknown outcome whose probe fails too: it stays unknown and goes to a person. */
export function playProbeFailed(ctx: SimContext, inv: Inv): boolean {
  ctx.world.dispatch(inv.key);
  attemptRecords(ctx, inv, 1, () => envelopes.unknown.seed003());
  inv.planned.scenario = "unknown, probe failed";
  inv.planned.expected = { status: "escalated" };
  inv.planned.followUp = probeFollowUp(ctx, inv, false);
  return false;
}

/** 2. Duplicate delivery: the same key sent twice; the receiver recognises it. One effect, two ok returns. */
export function playDuplicateDelivery(ctx: SimContext, inv: Inv): boolean {
  ctx.world.dispatch(inv.key, { dedupe: true });
  attemptRecords(ctx, inv, 1, () => envelopes.success.seed002(envelopeInput(ctx, inv, 1)));
  ctx.world.dispatch(inv.key, { dedupe: true });
  attemptRecords(ctx, inv, 2, () => {
    const ref = envelopeInput(ctx, inv, 2).ref;
    return {
      envelope: {
        ok: true,
        commit_state: "committed",
        operation_ref: ref,
        agent_message: "Already sent: recognised by idempotency key.",
        safe_details: { deduplicated: true },
      },
      dialect: "settle",
      wrapper: null,
      variant: "settle ToolSuccess (deduplicated)",
    };
  });
  inv.planned.scenario = "duplicate delivery";
  inv.planned.expected = { status: "succeeded" };
  return true;
}

/** 3. 200 with an error body: the transport succeeded, the operation did not. */
export function playErrorBody200(ctx: SimContext, inv: Inv): boolean {
  attemptRecords(ctx, inv, 1, () => ({
    envelope: {
      content: [{ type: "text", text: "HTTP 200 OK" }],
      structuredContent: {
        code: "INVALID_SKU",
        message: "SKU 88-112 does not exist.",
        retryable: false,
        hint: "Look the SKU up with get_price first.",
        field: "sku",
      },
      isError: false,
    },
    dialect: "seed001",
    wrapper: "mcp",
    variant: "mcp isError:false holding a seed001 error",
  }));
  inv.planned.scenario = "200 with an error body";
  inv.planned.expected = { status: "needs_input" };
  return false;
}

export const SLOW_BUDGET_S = 30;

/** 4. Slow success: the effect lands at 29 s of a 30 s budget. No orphaned retry races it. */
export function playSlowSuccess(ctx: SimContext, inv: Inv): boolean {
  const started = tick(ctx, inv.task);
  inv.task.records.push(intentRecord(inv, 1, started, SLOW_BUDGET_S));
  ctx.world.dispatch(inv.key);
  inv.task.clock = started + 29_000;
  inv.task.records.push(
    outcomeRecord(ctx, inv, 1, inv.task.clock, envelopes.success.seed002(envelopeInput(ctx, inv, 1))),
  );
  inv.planned.scenario = "slow success";
  inv.planned.expected = { status: "succeeded" };
  return true;
}

/** 5. Partial batch: one row permanently invalid. Per-item results, then a retry scoped to what was not applied. */
export function playPartialBatch(ctx: SimContext, inv: Inv, retry: Inv): boolean {
  const first = ctx.rng.int(2, 60);
  const rows = Array.from({ length: ctx.rng.int(6, 12) }, (_, i) => `row_${first + i}`);
  const items = rows.map((id, i) =>
    i === 1
      ? { id, applied: "no" as const, reason: "merged cell" }
      : i === 2
        ? { id, applied: "unknown" as const }
        : { id, applied: "yes" as const },
  );
  attemptRecords(ctx, inv, 1, () => envelopes.partialBatch(envelopeInput(ctx, inv, 1).ref, items));
  inv.planned.scenario = "partial batch";
  inv.planned.expected = { status: "partially_applied" };
  retry.planned.scenario = "scoped retry of a partial batch";
  retry.planned.expected = { status: "succeeded" };
  inv.planned.followUp = (view) => {
    const last = [...view.attempts].reverse().find((a) => a.phase === "outcome");
    const notApplied = (last?.items ?? []).filter((i) => i.applied === "no");
    if (view.status !== "partially_applied" || notApplied.length === 0) return { records: [] };
    const start = after(ctx, view);
    const done = notApplied.map((i) => ({ id: i.item_id, applied: "yes" as const }));
    return {
      records: [
        intentRecord(retry, 1, start, 60),
        outcomeRecord(ctx, retry, 1, start + 2_000, {
          envelope: { outcome: "ok", effect_applied: "yes", items: done, message: `${done.length} rows written` },
          dialect: "seed002",
          wrapper: null,
          variant: "seed002 ok with items",
        }),
      ],
    };
  };
  return false;
}

export const RATE_LIMIT_RETRY_AFTER_S = 30;

/** 6. Rate limit with Retry-After: the next attempt starts when Settle says the wait is over, not before. */
export function playRateLimit(ctx: SimContext, inv: Inv): boolean {
  ctx.world.dispatch(inv.key, { lands: false });
  attemptRecords(ctx, inv, 1, () => envelopes.retryLater.rfc9457RateLimit());
  inv.planned.scenario = "rate limit with Retry-After";
  inv.planned.expected = { status: "succeeded" };
  inv.planned.followUp = (view) => {
    if (view.status !== "retry_scheduled" || !view.not_before) return { records: [] };
    const start = Date.parse(view.not_before) + ctx.rng.int(500, 3_000);
    ctx.world.dispatch(inv.key);
    return {
      records: [
        intentRecord(inv, 2, start, budgetLeft(inv.task, start)),
        outcomeRecord(
          ctx,
          inv,
          2,
          start + ctx.rng.int(800, 3_000),
          envelopes.success.seed002(envelopeInput(ctx, inv, 2)),
        ),
      ],
    };
  };
  return false;
}

export function newScopedRetry(ctx: SimContext, inv: Inv): Inv {
  return newInvocation(ctx, inv.task, inv.tool.name, "scoped retry", { slot: "retry-1" });
}
