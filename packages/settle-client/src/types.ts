// The public contract of Settle's runtime API (SPEC §2, §5), as plain types.
// Names are Settle's wire names, so a record here is exactly what is posted.

export type EffectClass = "read" | "create" | "send" | "money" | "destructive";
export type Phase = "intent" | "outcome" | "probe";

/** One attempt record (SPEC §2). `envelope` is the tool's result in any dialect Settle reads. */
export type SettleRecord = {
  event_id?: string;
  task_id: string;
  invocation_id?: string;
  attempt_id?: string;
  attempt?: number;
  tool: string;
  phase?: Phase;
  at?: string;
  idempotency_key?: string;
  effect_class?: EffectClass | (string & {});
  budget_left_s?: number;
  args_digest?: string;
  envelope?: unknown;
};

/** Settle's own error envelope (SPEC §2): every request-level failure says whether and when to try again. */
export type ErrorEnvelope = {
  ok: false;
  code: string;
  category: string;
  commit_state: "committed" | "not_committed" | "unknown" | "partial";
  retry: { directive: "never" | "after_delay" | "after_input_fix" | "allowed"; not_before: string | null; max_attempts_remaining: number | null };
  next_action: string;
  operation_ref: string;
  safe_details: Record<string, unknown>;
  agent_message: string;
  user_message: string;
};

/** Settle's answer for one posted record. */
export type RecordResult = {
  index: number;
  status: "accepted" | "duplicate" | "rejected";
  event_id: string | null;
  invocation_id: string | null;
  error?: ErrorEnvelope;
};

/** A record's result as the client saw it: `resent` is true when the answer came only after sending the batch again. */
export type ReportResult = RecordResult & { resent: boolean };

/**
 * SPEC §5's four fields; Settle also takes what it stores with the intent it records: the effect class,
 * the dispatch time, the budget (past it the invocation is stalled), the arguments' digest and the call as sent.
 */
export type GuardInput = {
  task_id: string;
  invocation_id?: string;
  tool: string;
  idempotency_key: string;
  effect_class?: EffectClass | (string & {});
  at?: string;
  budget_left_s?: number;
  args_digest?: string;
  envelope?: unknown;
};
export type GuardAnswer = {
  allow: boolean;
  reason: null | "already_committed" | "outcome_unknown" | "in_flight";
  invocation_id: string;
  /** Allowed: the attempt number of the recorded intent (its outcome carries it). Denied: the blocking invocation's latest attempt. */
  attempt: number;
};

export type DecisionKind = "wait" | "verify" | "retry_allowed" | "do_not_retry" | "proceed" | "abandon" | "correct_input";

export type Decision = {
  invocation_id: string;
  status: string;
  decision: DecisionKind;
  commit_state: string;
  reason: string | null;
  decided_by: string | null;
  decided_at: string | null;
  version: number;
};

/** One stored attempt record of an invocation, as GET /api/v1/invocations/{id} lists it. */
export type AttemptView = {
  attempt: number | null;
  phase: Phase;
  at: string;
  commit_state: string;
  outcome: string;
  envelope: unknown;
  [field: string]: unknown;
};

/** GET /api/v1/invocations/{id} (SPEC §8): the fields a runtime acts on, and the rest as sent. */
export type InvocationDetail = {
  invocation_id: string;
  task_id: string;
  tool: string;
  status: string;
  commit_state: string;
  version: number;
  attempts: AttemptView[];
  actions: Array<{ action: string; actor: string; at: string; from_status: string | null; to_status: string | null; [field: string]: unknown }>;
  [field: string]: unknown;
};
