import * as envelopes from "./envelopes";
import { pickBuilder, type Sent } from "./envelopes";
import { attemptRecords, envelopeInput, tick, type Inv, type SimContext } from "./recorder";
import type { InvocationStatus } from "@/lib/outcome/status";

// One transport attempt, or two, whose result the tool states plainly. Each
// returns whether the task may go on to its next step.

type Variant = (input: envelopes.EnvelopeInput) => Sent;

function single(ctx: SimContext, inv: Inv, variant: Variant, status: InvocationStatus, scenario: string): boolean {
  attemptRecords(ctx, inv, 1, () => variant(envelopeInput(ctx, inv, 1)));
  inv.planned.expected = { status };
  inv.planned.scenario = scenario;
  return status === "succeeded";
}

export function playOk(ctx: SimContext, inv: Inv, variant?: Variant): boolean {
  const choices = inv.tool.effect === "read" ? { ...envelopes.success, ...envelopes.readSuccess } : envelopes.success;
  return single(ctx, inv, variant ?? pickBuilder(ctx.rng, choices), "succeeded", "success");
}

/** Refused before anything changed; the retry waits as long as it was told to, then succeeds. */
export function playRetryThenOk(ctx: SimContext, inv: Inv, first?: Variant, second?: Variant): boolean {
  const refused =
    first ??
    pickBuilder(
      ctx.rng,
      inv.tool.effect === "read" ? envelopes.readFailure : { seed002: envelopes.retryLater.seed002 },
    );
  attemptRecords(ctx, inv, 1, () => refused(envelopeInput(ctx, inv, 1)));
  tick(ctx, inv.task, 20, 40);
  attemptRecords(ctx, inv, 2, () => (second ?? pickBuilder(ctx.rng, envelopes.success))(envelopeInput(ctx, inv, 2)));
  inv.planned.expected = { status: "succeeded" };
  inv.planned.scenario = "retry after a refusal, then success";
  return true;
}

export const playInputError = (ctx: SimContext, inv: Inv, variant?: Variant) =>
  single(ctx, inv, variant ?? pickBuilder(ctx.rng, envelopes.inputError), "needs_input", "input error");

export const playRefusal = (ctx: SimContext, inv: Inv, variant?: Variant) =>
  single(ctx, inv, variant ?? pickBuilder(ctx.rng, envelopes.refusal), "escalated", "tool refused");

export const playPermanent = (ctx: SimContext, inv: Inv, variant?: Variant) =>
  single(ctx, inv, variant ?? pickBuilder(ctx.rng, envelopes.permanent), "failed", "permanent failure");

export const playApproval = (ctx: SimContext, inv: Inv, variant?: Variant) =>
  single(ctx, inv, variant ?? envelopes.approval.settle, "awaiting_approval", "approval required");

/** A write failed without saying whether it landed, and the tool has no way to look it up. */
export function playUnknownStays(ctx: SimContext, inv: Inv, variant?: Variant): boolean {
  ctx.world.dispatch(inv.key, { lands: ctx.rng.chance(0.5) });
  return single(
    ctx,
    inv,
    variant ?? pickBuilder(ctx.rng, envelopes.unknown),
    "outcome_unknown",
    "unknown outcome, no probe",
  );
}
