import type { InvocationRowWithHistory } from "./read";

// Rows of the invocation reads as the API types them: one mapper per table, so
// each SELECT in queries.ts says only which columns it reads.

export type Raw = Record<string, unknown>;

export const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
export const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
// jsonb arrives parsed (pg and PGlite both parse it); a JSON string is a string value, not text to parse again.
export const json = (v: unknown): unknown => v;
export const int = (v: unknown): number => Number(v);
export const intOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const text = (v: unknown): string => String(v);
export const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export type InvocationRow = Omit<InvocationRowWithHistory, "attempts" | "actions">;
export type AttemptRow = InvocationRowWithHistory["attempts"][number];
export type ActionRow = InvocationRowWithHistory["actions"][number];

export function invocationOf(r: Raw): InvocationRow {
  return {
    id: text(r.id),
    runtimeId: text(r.runtime_id),
    invocationId: text(r.invocation_id),
    taskId: text(r.task_id),
    tool: text(r.tool),
    effectClass: textOrNull(r.effect_class),
    idempotencyKey: textOrNull(r.idempotency_key),
    status: text(r.status),
    commitState: text(r.commit_state),
    nextAction: text(r.next_action),
    version: int(r.version),
    conflict: Boolean(r.conflict),
    attemptCount: int(r.attempt_count),
    firstSeenAt: date(r.first_seen_at),
    lastAttemptAt: date(r.last_attempt_at),
    statusSince: date(r.status_since),
    stallAt: dateOrNull(r.stall_at),
    notBefore: dateOrNull(r.not_before),
    assignee: textOrNull(r.assignee),
    userMessage: textOrNull(r.user_message),
    lastCode: textOrNull(r.last_code),
    resolution: json(r.resolution) as never,
    updatedAt: date(r.updated_at),
    argsDigest: textOrNull(r.args_digest),
    summary: textOrNull(r.summary),
    argsMismatch: Boolean(r.args_mismatch),
    argumentsEdit: (json(r.arguments_edit) ?? null) as InvocationRow["argumentsEdit"],
    possibleDuplicateOf: textOrNull(r.possible_duplicate_of),
    duplicateReview: textOrNull(r.duplicate_review),
    argsReview: textOrNull(r.args_review),
    runtime: { name: text(r.runtime) },
  };
}

export function attemptOf(r: Raw, light: boolean): AttemptRow {
  return {
    invocationUid: text(r.invocation_uid),
    runtimeId: text(r.runtime_id),
    eventKey: text(r.event_key),
    eventId: textOrNull(r.event_id),
    seq: int(r.seq),
    attemptId: textOrNull(r.attempt_id),
    attemptNo: intOrNull(r.attempt_no),
    phase: text(r.phase),
    at: date(r.at),
    receivedAt: date(r.received_at),
    tool: text(r.tool),
    effectClass: textOrNull(r.effect_class),
    idempotencyKey: textOrNull(r.idempotency_key),
    budgetLeftS: intOrNull(r.budget_left_s),
    argsDigest: textOrNull(r.args_digest),
    summary: textOrNull(r.summary),
    dialect: text(r.dialect),
    wrapperDialect: textOrNull(r.wrapper_dialect),
    outcome: text(r.outcome),
    commitState: text(r.commit_state),
    code: textOrNull(r.code),
    category: textOrNull(r.category),
    retryDirective: text(r.retry_directive),
    notBefore: dateOrNull(r.not_before),
    maxAttemptsRemaining: intOrNull(r.max_attempts_remaining),
    nextAction: text(r.next_action),
    dispatchStage: textOrNull(r.dispatch_stage),
    probeResult: textOrNull(r.probe_result),
    userMessage: textOrNull(r.user_message),
    items: json(r.items) as never,
    ignored: json(r.ignored) as never,
    ...(light
      ? {}
      : {
          safeDetails: json(r.safe_details) as never,
          agentMessage: textOrNull(r.agent_message),
          envelope: json(r.envelope) as never,
          arguments: json(r.arguments) as never,
        }),
  };
}

export function actionOf(r: Raw): ActionRow {
  return {
    id: text(r.id),
    runtimeId: text(r.runtime_id),
    invocationUid: text(r.invocation_uid),
    seq: int(r.seq),
    action: text(r.action),
    actor: text(r.actor),
    at: date(r.at),
    fromStatus: text(r.from_status),
    toStatus: text(r.to_status),
    note: textOrNull(r.note),
    payload: json(r.payload) as never,
  };
}
