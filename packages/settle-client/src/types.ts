// The public contract of Settle's runtime API (docs/outcome-model.md §2, §5), as plain types.
// Names are Settle's wire names, so a record here is exactly what is posted.

// The vocabulary Settle's API speaks, as values too, so a contract test can hold them against the
// server's OpenAPI document (this package is published alone and keeps its own copy).
export const effectClasses = ["read", "create", "send", "money", "destructive"] as const;
export type EffectClass = (typeof effectClasses)[number];
export const phases = ["intent", "outcome", "probe"] as const;
export type Phase = (typeof phases)[number];
export const commitStates = ["committed", "not_committed", "unknown", "partial"] as const;
export type CommitState = (typeof commitStates)[number];
export const retryDirectives = ["never", "after_delay", "after_input_fix", "allowed"] as const;
export type RetryDirective = (typeof retryDirectives)[number];
export const recordStatuses = ["accepted", "duplicate", "rejected"] as const;
export const guardReasons = ["already_committed", "outcome_unknown", "in_flight", "possible_duplicate"] as const;
export type GuardReason = (typeof guardReasons)[number];
export const decisionKinds = [
  "wait",
  "verify",
  "retry_allowed",
  "do_not_retry",
  "proceed",
  "abandon",
  "correct_input",
] as const;

/** One attempt record (docs/outcome-model.md §2). `envelope` is the tool's result in any dialect Settle reads. */
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
  /** The call's arguments (a JSON object, at most 64 KiB): digested, stored with secrets redacted, summarised. */
  arguments?: Record<string, unknown>;
  envelope?: unknown;
};

/** Settle's own error envelope (docs/outcome-model.md §2): every request-level failure says whether and when to try again. */
export type ErrorEnvelope = {
  ok: false;
  code: string;
  category: string;
  commit_state: CommitState;
  retry: { directive: RetryDirective; not_before: string | null; max_attempts_remaining: number | null };
  next_action: string;
  operation_ref: string;
  safe_details: Record<string, unknown>;
  agent_message: string;
  user_message: string;
};

/** Settle's answer for one posted record. */
export type RecordResult = {
  index: number;
  status: (typeof recordStatuses)[number];
  event_id: string | null;
  invocation_id: string | null;
  error?: ErrorEnvelope;
};

/** A record's result as the client saw it: `resent` is true when the answer came only after sending the batch again. */
export type ReportResult = RecordResult & { resent: boolean };

/**
 * docs/outcome-model.md §5's four fields; Settle also takes what it stores with the intent it records: the effect class,
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
  /** The call's arguments (a JSON object, at most 64 KiB): how Settle tells the same call under a new key. */
  arguments?: Record<string, unknown>;
  envelope?: unknown;
};
export type GuardAnswer = {
  allow: boolean;
  reason: null | GuardReason;
  invocation_id: string;
  /** Allowed: the attempt number of the recorded intent (its outcome carries it). Denied: the blocking invocation's latest attempt. */
  attempt: number;
};

export type DecisionKind = (typeof decisionKinds)[number];

export type Decision = {
  invocation_id: string;
  status: string;
  decision: DecisionKind;
  commit_state: string;
  reason: string | null;
  decided_by: string | null;
  decided_at: string | null;
  version: number;
  /**
   * The arguments a person approved in place of the call's own (approve with edits); run the call with these. An
   * integer past 2^53 (`Number.MAX_SAFE_INTEGER`) in them is a `bigint` holding its exact digits, as in every
   * answer the client reads; the client writes a `bigint` back as those digits.
   */
  approved_arguments?: Record<string, unknown> | null;
  /** A person's message to the agent with a rejection or an escalation: the model reads it as the tool's result. */
  reply?: string | null;
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

/** GET /api/v1/invocations/{id} (docs/outcome-model.md §8): the fields a runtime acts on, and the rest as sent. */
export type InvocationDetail = {
  invocation_id: string;
  task_id: string;
  tool: string;
  status: string;
  commit_state: string;
  version: number;
  attempts: AttemptView[];
  actions: Array<{
    action: string;
    actor: string;
    at: string;
    from_status: string | null;
    to_status: string | null;
    [field: string]: unknown;
  }>;
  [field: string]: unknown;
};

/** GET /api/v1/tool-catalog: the runtime's catalog, most specific entry first. */
export type ToolCatalog = {
  runtime: string;
  items: Array<{
    pattern: string;
    effect_class: EffectClass;
    volatile_args: string[] | null;
    [field: string]: unknown;
  }>;
};
