import { z } from "zod";
import { applyEvidence, move, type LifecycleConfig, type LifecycleState } from "./lifecycle";
import { effectiveStatus, type InvocationStatus } from "./status";
import { allowedFrom, type ActionName } from "./transitions";

// Operator actions (docs/outcome-model.md §4) as transitions of the same state machine.

/** Words a person sends the agent with a rejection or an escalation; the decision API hands them to the runtime. */
const replySchema = z
  .string()
  .trim()
  .min(1)
  .max(4000)
  .nullish()
  .describe("A message to the agent, which the decision API returns and the clients hand to the model.");

export const operatorActionSchema = z.discriminatedUnion("action", [
  z.object({
    action: z.literal("approve"),
    note: z.string().max(4000).nullish(),
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "Approve with edits: the arguments the call is to run with instead of its own. The approval binds to their digest; refused when they hold a redacted or secret-looking value (docs/outcome-model.md §4).",
      ),
  }),
  z.object({ action: z.literal("reject"), note: z.string().max(4000).nullish(), reply: replySchema }),
  z.object({ action: z.literal("request_verification"), note: z.string().max(4000).nullish() }),
  z.object({
    action: z.literal("record_verification"),
    result: z.enum(["found", "absent", "inconclusive"]),
    note: z.string().max(4000).nullish(),
    evidence: z.string().max(4000).nullish(),
  }),
  z.object({
    action: z.literal("mark_reconciled"),
    commit_state: z.enum(["committed", "not_committed"]),
    note: z.string().trim().min(1, "an evidence note is required").max(4000),
  }),
  z.object({
    action: z.literal("escalate"),
    note: z.string().trim().min(1, "a reason is required").max(4000),
    reply: replySchema,
  }),
  z.object({
    action: z.literal("assign"),
    assignee: z.string().trim().min(1).max(320),
    note: z.string().max(4000).nullish(),
  }),
  z.object({ action: z.literal("unassign"), note: z.string().max(4000).nullish() }),
  z.object({ action: z.literal("comment"), note: z.string().trim().min(1, "a comment needs text").max(4000) }),
]);
export type OperatorAction = z.infer<typeof operatorActionSchema>;
export type { ActionName };
export { allowedFrom };

export type ActionContext = { actor: string; at: string; quorum?: number };
export type ActionResult =
  | { ok: true; state: LifecycleState; from: InvocationStatus; to: InvocationStatus }
  | { ok: false; code: "TRANSITION_REFUSED" | "ALREADY_APPROVED"; from: InvocationStatus; message: string };

export function actionsAllowed(state: LifecycleState, now: Date): ActionName[] {
  const status = effectiveStatus(state.status, state.stallAt, now);
  return (Object.keys(allowedFrom) as ActionName[]).filter((a) => allowedFrom[a]?.includes(status) ?? true);
}

function settle(
  state: LifecycleState,
  ctx: ActionContext,
  commit: "committed" | "not_committed",
  note: string | null,
): LifecycleState {
  return {
    ...state,
    status: "reconciled",
    commitState: commit,
    nextAction: commit === "committed" ? "none" : "wait_and_retry",
    resolution: { commit_state: commit, by: "operator", actor: ctx.actor, at: ctx.at, note },
    settled: { attempt: state.lastAttempt, commitState: commit, by: "operator" },
  };
}

function transition(state: LifecycleState, a: OperatorAction, ctx: ActionContext): LifecycleState | "already_approved" {
  switch (a.action) {
    case "approve": {
      if (state.approvals.includes(ctx.actor)) return "already_approved";
      const approvals = [...state.approvals, ctx.actor];
      return approvals.length >= (ctx.quorum ?? 1)
        ? { ...state, status: "approved", nextAction: "none", approvals: [] }
        : { ...state, approvals };
    }
    case "reject":
      return { ...state, status: "rejected", nextAction: "none", approvals: [] };
    case "request_verification":
      return { ...state, status: "verifying", nextAction: "verify_operation" };
    case "record_verification":
      if (a.result === "inconclusive") return state;
      return settle(state, ctx, a.result === "found" ? "committed" : "not_committed", a.evidence ?? a.note ?? null);
    case "mark_reconciled":
      return settle(state, ctx, a.commit_state, a.note);
    case "escalate":
      return { ...state, status: "escalated", nextAction: "escalate" };
    case "assign":
      return { ...state, assignee: a.assignee };
    case "unassign":
      return { ...state, assignee: null };
    case "comment":
      return state;
  }
}

export function applyAction(state: LifecycleState, a: OperatorAction, ctx: ActionContext): ActionResult {
  const from = effectiveStatus(state.status, state.stallAt, new Date(ctx.at));
  const allowed = allowedFrom[a.action];
  if (allowed && !allowed.includes(from)) {
    return {
      ok: false,
      code: "TRANSITION_REFUSED",
      from,
      message: `${a.action} is not allowed while the invocation is ${from}.`,
    };
  }
  const next = transition(state, a, ctx);
  if (next === "already_approved") {
    return { ok: false, code: "ALREADY_APPROVED", from, message: `${ctx.actor} has already approved this invocation.` };
  }
  const moved = move(state, ctx.at, next);
  return { ok: true, state: moved, from, to: effectiveStatus(moved.status, moved.stallAt, new Date(ctx.at)) };
}

export { applyEvidence, type LifecycleConfig };
