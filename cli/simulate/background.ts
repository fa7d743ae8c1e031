import { workflows, type Tool } from "./catalog";
import { playEvidenceFailure, playStalled } from "./faults";
import {
  newScopedRetry,
  playDuplicateDelivery,
  playKillMidCall,
  playPartialBatch,
  playProbeFailed,
  playRateLimit,
  playSlowSuccess,
} from "./fixtures";
import {
  playApproval,
  playInputError,
  playOk,
  playPermanent,
  playRefusal,
  playRetryThenOk,
  playUnknownStays,
} from "./outcomes";
import { newInvocation, newTask, tick, type Inv, type SimContext } from "./recorder";

// The bulk of a run: business tasks that call their tools in order and stop
// at the first step that does not succeed, with outcomes drawn at rates a
// busy runtime might see.

type Pattern = { weight: number; fits: (tool: Tool) => boolean; play: (ctx: SimContext, inv: Inv) => boolean };

const any = () => true;
const write = (t: Tool) => t.effect !== "read";

const patterns: Pattern[] = [
  { weight: 62, fits: any, play: (c, i) => playOk(c, i) },
  { weight: 7, fits: any, play: (c, i) => playRetryThenOk(c, i) },
  { weight: 5, fits: any, play: (c, i) => playInputError(c, i) },
  { weight: 2, fits: any, play: (c, i) => playPermanent(c, i) },
  { weight: 4, fits: write, play: (c, i) => playKillMidCall(c, i, true) },
  { weight: 2, fits: write, play: (c, i) => playKillMidCall(c, i, false) },
  { weight: 3, fits: write, play: (c, i) => playUnknownStays(c, i) },
  { weight: 1, fits: write, play: playProbeFailed },
  { weight: 3, fits: (t) => t.effect === "money", play: (c, i) => playApproval(c, i) },
  { weight: 2, fits: write, play: (c, i) => playRefusal(c, i) },
  { weight: 2, fits: write, play: playDuplicateDelivery },
  { weight: 1, fits: write, play: playSlowSuccess },
  { weight: 2, fits: write, play: playRateLimit },
  { weight: 2, fits: write, play: playStalled },
  { weight: 1, fits: (t) => t.effect === "money" || t.effect === "create", play: playEvidenceFailure },
  { weight: 30, fits: (t) => Boolean(t.batch), play: (c, i) => playPartialBatch(c, i, newScopedRetry(c, i)) },
];

export function playBackgroundTask(ctx: SimContext, number: number, start: number): void {
  const workflow = ctx.rng.pick(workflows);
  const task = newTask(ctx, workflow.prefix, workflow.actor, number, start);
  for (const step of workflow.steps) {
    const inv = newInvocation(ctx, task, step, "workflow");
    const fitting = patterns.filter((p) => p.fits(inv.tool));
    const pattern = ctx.rng.weighted(fitting.map((p) => [p, p.weight] as const));
    if (!pattern.play(ctx, inv)) return;
    tick(ctx, task, 2, 20);
  }
}
