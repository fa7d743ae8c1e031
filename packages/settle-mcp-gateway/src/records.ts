import type { SettleRecord } from "@settle/client";
import type { EffectOrUnclassified } from "./config.js";
import { fitEnvelope } from "./fit.js";

// The records the gateway sends for one attempt. Event ids are derived from
// the invocation and the attempt, so a record sent again (from the spool,
// after a lost answer) is the same record to Settle, never a second one.

export type AttemptRef = {
  taskId: string;
  invocationId: string;
  attempt: number;
  tool: string;
  idempotencyKey: string;
  effect: EffectOrUnclassified;
  argsDigest: string;
  /** Sent on every record of the call, so Settle digests the same arguments each time; null: the digest alone. */
  arguments: Record<string, unknown> | null;
};

export function attemptRecord(
  ref: AttemptRef,
  phase: "intent" | "outcome" | "probe",
  envelope: unknown,
  at: Date,
  suffix = "",
): SettleRecord {
  return {
    event_id: `${ref.invocationId}:a${ref.attempt}:${phase}${suffix}`,
    task_id: ref.taskId,
    invocation_id: ref.invocationId,
    attempt: ref.attempt,
    attempt_id: `${ref.invocationId}:a${ref.attempt}`,
    tool: ref.tool,
    phase,
    at: at.toISOString(),
    idempotency_key: ref.idempotencyKey,
    ...(ref.effect === "unclassified" ? {} : { effect_class: ref.effect }),
    ...(ref.arguments ? { arguments: ref.arguments } : { args_digest: ref.argsDigest }),
    ...(envelope === undefined ? {} : { envelope: fitEnvelope(envelope) }),
  };
}

/** Settle's own envelope for the request for approval: not committed, a person is to approve (docs/outcome-model.md §4 awaiting_approval). */
export function approvalRequestEnvelope(tool: string) {
  const message = `settle-mcp holds ${tool} until a person approves it in Settle.`;
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
