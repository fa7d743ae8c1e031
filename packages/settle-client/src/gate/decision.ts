import type { Decision, InvocationDetail } from "../types.js";

// Settle's decisions as a framework's tool call needs them: the request for a
// person's approval (docs/outcome-model.md §4 awaiting_approval), whether a
// person approved after the latest request, and the fields a decision hands to
// the call itself. decisionFields is the one place those fields are read, so a
// decision that carries more (a person's edited arguments, a reply to the
// agent) reaches every adapter from here.

/** Settle's own envelope for a request for approval: not committed, a person is to approve. */
export function approvalRequestEnvelope(tool: string) {
  const message = `${tool} is held until a person approves it in Settle.`;
  return {
    ok: false,
    code: "APPROVAL_REQUIRED",
    category: "authorization",
    commit_state: "not_committed",
    retry: { directive: "never", not_before: null, max_attempts_remaining: null },
    next_action: "request_approval",
    dispatch_stage: "pre_dispatch",
    safe_details: {},
    agent_message: message,
    user_message: message,
  };
}

/** Whether a person approved the invocation after its latest request for approval (a new intent hides the status). */
export function approvedSinceRequest(detail: InvocationDetail): boolean {
  const requests = detail.attempts
    .filter((a) => a.phase === "outcome" && (a.envelope as { code?: unknown } | null)?.code === "APPROVAL_REQUIRED")
    .map((a) => Date.parse(a.at));
  if (requests.length === 0) return false;
  const latest = Math.max(...requests);
  return detail.actions.some((a) => a.action === "approve" && a.to_status === "approved" && Date.parse(a.at) >= latest);
}

export type DecisionFields = {
  /** Arguments a person approved in place of the call's own, when the decision carries them. */
  arguments?: Record<string, unknown>;
  /** Words a person sent the agent with the decision. */
  reply?: string | null;
};

/** What a decision hands to the call: read here only (see the header). */
export function decisionFields(decision: Decision | null | undefined): DecisionFields {
  const extra = (decision ?? {}) as Record<string, unknown>;
  const fields: DecisionFields = {};
  const approved = extra.approved_arguments;
  if (approved !== null && typeof approved === "object" && !Array.isArray(approved))
    fields.arguments = approved as Record<string, unknown>;
  if (typeof extra.reply === "string" && extra.reply.trim() !== "") fields.reply = extra.reply;
  return fields;
}

export type ApprovalState =
  /** No approval needed, or Settle answers the call some other way (the tool's own answer says how). */
  | "not_needed"
  | "approved"
  | "rejected"
  /** Escalated with a person's reply: not run now; the reply is for the model (a later call runs once it is approved). */
  | "escalated"
  /** Waiting for a person in Settle's console (the request is recorded). */
  | "pending";
