import type { Decision } from "../types.js";
import { approvalRequestEnvelope, decisionFields, type ApprovalState } from "./decision.js";
import type { Gate, GateCall, GateContext } from "./gate.js";

// A framework's own approval step (the AI SDK's needsApproval, the OpenAI
// Agents SDK's interruptions) answered by Settle's console: the first ask
// records the request (the guard writes the intent, then an APPROVAL_REQUIRED
// outcome makes the invocation await approval); later asks read the decision.

export type ApprovalAnswer = { state: ApprovalState; invocationId: string | null; reason: string | null };

const derived = (taskId: string, key: string) => `${taskId}:${key}`;

async function read<C extends GateContext>(gate: Gate<C>, invocationId: string): Promise<Decision | null> {
  try {
    return await gate.client.getDecision(invocationId);
  } catch {
    return null;
  }
}

function stateOf(decision: Decision): ApprovalAnswer | null {
  const inv = decision.invocation_id;
  const by = decision.decided_by ? ` by ${decision.decided_by}` : "";
  // A person's reply is the model's to read: quoted after what happened, as in the gate's sentences.
  const { reply } = decisionFields(decision);
  const said = reply ? ` They said: "${reply}"` : "";
  if (decision.decision === "proceed") return { state: "approved", invocationId: inv, reason: null };
  if (decision.status === "rejected")
    return { state: "rejected", invocationId: inv, reason: `Rejected${by} in Settle.${said}` };
  if (decision.status === "escalated" && decision.commit_state !== "unknown")
    // Escalated instead of approved: not run now. With a reply, the model reads it (a later call runs once approved).
    return reply
      ? { state: "escalated", invocationId: inv, reason: `Escalated${by} in Settle; not run yet.${said}` }
      : { state: "pending", invocationId: inv, reason: "Escalated in Settle; waiting for a person's decision." };
  if (decision.status === "awaiting_approval")
    return { state: "pending", invocationId: inv, reason: "Waiting for a person's approval in Settle." };
  return null;
}

/** Whether this call may run, must wait for a person, or was refused; records the request for approval the first time. */
export async function approvalFor<C extends GateContext>(gate: Gate<C>, call: GateCall<C>): Promise<ApprovalAnswer> {
  const id = await gate.identify(call);
  if (id.effect === "read" || !gate.needsApproval(call.tool, id.effect))
    return { state: "not_needed", invocationId: null, reason: null };
  const inv = derived(id.taskId, id.idempotencyKey);
  const known = await read(gate, inv);
  const state = known ? stateOf(known) : null;
  if (state) return state;
  let allowed;
  try {
    allowed = await gate.client.guard({
      task_id: id.taskId,
      tool: call.tool,
      idempotency_key: id.idempotencyKey,
      ...(id.effect ? { effect_class: id.effect } : {}),
      at: new Date().toISOString(),
    });
  } catch {
    // Settle cannot record the request: the call itself will be answered (refused, or run as the options say).
    return { state: "not_needed", invocationId: null, reason: null };
  }
  // Already done, unknown or in flight: not a question for a person; the call's own answer says what happened.
  if (!allowed.allow) return { state: "not_needed", invocationId: allowed.invocation_id, reason: null };
  const at = allowed.attempt;
  await gate.client.report({
    event_id: `${allowed.invocation_id}:a${at}:outcome:approval`,
    task_id: id.taskId,
    invocation_id: allowed.invocation_id,
    attempt: at,
    attempt_id: `${allowed.invocation_id}:a${at}`,
    tool: call.tool,
    phase: "outcome",
    at: new Date().toISOString(),
    idempotency_key: id.idempotencyKey,
    ...(id.effect ? { effect_class: id.effect } : {}),
    envelope: approvalRequestEnvelope(call.tool),
  });
  return {
    state: "pending",
    invocationId: allowed.invocation_id,
    reason: "Waiting for a person's approval in Settle.",
  };
}

/** Waits (long-polling) up to `timeoutMs` for a person's decision on a call that awaits approval. */
export async function awaitApproval<C extends GateContext>(
  gate: Gate<C>,
  call: GateCall<C>,
  timeoutMs: number,
): Promise<ApprovalAnswer> {
  const first = await approvalFor(gate, call);
  if (first.state !== "pending" || first.invocationId === null) return first;
  const decision = await gate.client
    .awaitDecision(first.invocationId, { timeout: timeoutMs, until: (d) => d.status !== "awaiting_approval" })
    .catch(() => null);
  return (decision && stateOf(decision)) ?? first;
}
