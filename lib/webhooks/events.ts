import { z } from "zod";
import { decideFor, decisions } from "../outcome/decisions";
import type { Resolution } from "../outcome/lifecycle";
import { type InvocationStatus } from "../outcome/status";
import { invocationStatusSchema } from "../outcome/vocabulary";

// Which status changes a runtime hears about, and what the event says. Pure:
// the fan-out job reads transitions and calls eventFor for each.

export const webhookEventTypes = [
  "invocation.settled",
  "invocation.decision_changed",
  "invocation.verification_requested",
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/**
 * Where the commit state is decided for good and nobody in Settle is still
 * working on it. `approved` is not here: the effect has not happened yet, so it
 * is a decision change (wait → proceed), not a settlement.
 */
export const settledStatuses: readonly InvocationStatus[] = ["succeeded", "failed", "reconciled", "rejected"];

/** One row of invocation_transitions, with what the event names from its invocation and the state before it. */
export type TransitionFacts = {
  /** invocation_transitions.id */
  id: string;
  invocationUid: string;
  status: InvocationStatus;
  commitState: string;
  resolutionBy: string | null;
  notBefore: Date | null;
  version: number;
  at: Date;
  fromStatus: InvocationStatus | null;
  previous: { commitState: string; resolutionBy: string | null; notBefore: Date | null } | null;
  /** The person (or `system`) whose action made this state, when an action did. */
  actor: string | null;
  /** Why Settle's own action made this state, when it says (e.g. no_verifier_running, lib/verify/liveness.ts). */
  reason?: string | null;
  invocationId: string;
  taskId: string;
  tool: string;
  effectClass: string | null;
  idempotencyKey: string | null;
  /** What the call was (lib/catalog/templates.ts); absent or null: no arguments were sent. */
  summary?: string | null;
  runtime: string;
};

const time = z.string().meta({ format: "date-time" });

/** docs/outcome-model.md §5's decision body, and what the runtime needs to match it to its own call. */
export const webhookEventDataSchema = z.object({
  invocation_id: z.string(),
  status: invocationStatusSchema,
  decision: z.enum(decisions),
  commit_state: z.string(),
  reason: z.string(),
  decided_by: z
    .string()
    .describe(
      'The operator\'s email or "system" when an action made this state, "probe" when a probe settled it, else "runtime" (its own record).',
    ),
  decided_at: time.describe("When this state began."),
  version: z
    .number()
    .int()
    .describe("The invocation's version: events can arrive out of order, the highest version is the latest."),
  previous_decision: z.enum(decisions).nullable().describe("null for an invocation's first state."),
  from_status: invocationStatusSchema.nullable(),
  to_status: invocationStatusSchema,
  not_before: time.nullable().describe("For retry_scheduled: when a retry is allowed."),
  task_id: z.string(),
  tool: z.string(),
  effect_class: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  summary: z
    .string()
    .nullable()
    .describe(
      "One line of plain text saying what the call was (its tool's summary template); null: no arguments were sent.",
    ),
  runtime: z.string(),
});
export type WebhookEventData = z.infer<typeof webhookEventDataSchema>;

export const webhookEventSchema = z
  .object({
    id: z
      .string()
      .describe("evt_…, also in the Settle-Event-Id header: the same on every try, so receivers de-duplicate by it."),
    type: z.enum(webhookEventTypes),
    created_at: time,
    data: webhookEventDataSchema,
  })
  .meta({ id: "WebhookEvent" });
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/** The resolution a transition's resolution_by stands for (a probe's or an operator's), or null. */
export function resolutionOf(commitState: string, by: string | null, at: Date): Resolution | null {
  if (by !== "probe" && by !== "operator") return null;
  const settled = commitState === "committed" ? "committed" : "not_committed";
  return { commit_state: settled, by, actor: null, at: at.toISOString(), note: null };
}

/** Who made this state: the acting person or `system`, a probe, or the runtime's own outcome record. */
function decidedBy(facts: TransitionFacts): string {
  if (facts.actor) return facts.actor;
  return facts.resolutionBy === "probe" ? "probe" : "runtime";
}

/**
 * The event a transition produces, or null when the runtime has nothing new to
 * learn. Both decisions are read at the transition's own time, so a late
 * fan-out says what the decision endpoint said then. A first state counts as
 * coming from `wait` (nothing was decided before it existed).
 */
export function eventFor(facts: TransitionFacts, createdAt: Date): WebhookEvent | null {
  const current = decideFor(
    {
      status: facts.status,
      commitState: facts.commitState,
      notBefore: facts.notBefore,
      resolution: resolutionOf(facts.commitState, facts.resolutionBy, facts.at),
    },
    facts.at,
  );
  const previous =
    facts.fromStatus === null
      ? null
      : decideFor(
          {
            status: facts.fromStatus,
            commitState: facts.previous?.commitState ?? "unknown",
            notBefore: facts.previous?.notBefore ?? null,
            resolution: facts.previous
              ? resolutionOf(facts.previous.commitState, facts.previous.resolutionBy, facts.at)
              : null,
          },
          facts.at,
        ).decision;
  const settled = settledStatuses.includes(facts.status);
  const changed = current.decision !== (previous ?? "wait");
  if (!settled && !changed) return null;
  return {
    // The transition's id is unique in this database; the invocation's random uuid makes the event id unique across installations too.
    id: `evt_${facts.invocationUid.replaceAll("-", "")}_${facts.id}`,
    type: settled ? "invocation.settled" : "invocation.decision_changed",
    created_at: createdAt.toISOString(),
    data: {
      invocation_id: facts.invocationId,
      status: facts.status,
      decision: current.decision,
      commit_state: facts.commitState,
      reason: current.reason,
      decided_by: decidedBy(facts),
      decided_at: facts.at.toISOString(),
      version: facts.version,
      previous_decision: previous,
      from_status: facts.fromStatus,
      to_status: facts.status,
      not_before: facts.notBefore?.toISOString() ?? null,
      task_id: facts.taskId,
      tool: facts.tool,
      effect_class: facts.effectClass,
      idempotency_key: facts.idempotencyKey,
      summary: facts.summary ?? null,
      runtime: facts.runtime,
    },
  };
}
