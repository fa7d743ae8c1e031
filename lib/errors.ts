import { z } from "zod";
import {
  categorySchema,
  commitStateSchema,
  nextActionSchema,
  retryDirectiveSchema,
  type Category,
  type CommitState,
  type NextAction,
  type RetryDirective,
} from "./outcome/vocabulary";

// Settle's own error envelope (docs/outcome-model.md §2, source article 000 (docs/outcome-model.md)'s shape) for every API
// failure, so that a runtime can decide what to do without reading prose.

export const errorEnvelopeSchema = z
  .object({
    ok: z.literal(false),
    code: z.string(),
    category: categorySchema,
    commit_state: commitStateSchema,
    retry: z.object({
      directive: retryDirectiveSchema,
      not_before: z.string().nullable(),
      max_attempts_remaining: z.number().int().nullable(),
    }),
    next_action: nextActionSchema,
    operation_ref: z.string(),
    safe_details: z.record(z.string(), z.unknown()),
    agent_message: z.string(),
    user_message: z.string(),
  })
  .meta({ id: "ErrorEnvelope" });
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

type Spec = {
  status: number;
  category: Category;
  commit: CommitState;
  directive: RetryDirective;
  next: NextAction;
  user: string;
  delayS?: number;
  attempts?: number;
};

// Request-level failures happen before anything is stored (or in a
// transaction that rolled back), so they are `not_committed` unless said otherwise.
const catalog = {
  UNAUTHENTICATED: {
    status: 401,
    category: "authorization",
    commit: "not_committed",
    directive: "never",
    next: "escalate",
    user: "The request was not authenticated.",
  },
  KEY_REVOKED: {
    status: 401,
    category: "authorization",
    commit: "not_committed",
    directive: "never",
    next: "escalate",
    user: "This key has been revoked.",
  },
  PASSWORD_CHANGE_REQUIRED: {
    status: 403,
    category: "authorization",
    commit: "not_committed",
    directive: "never",
    next: "correct_input",
    user: "Choose a new password first (Account → Password).",
  },
  WRONG_PASSWORD: {
    status: 400,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "The current password is not right.",
  },
  RESET_LINK_INVALID: {
    status: 410,
    category: "validation",
    commit: "not_committed",
    directive: "never",
    next: "escalate",
    user: "This reset link is not valid any more: ask an admin for a new one.",
  },
  TOKEN_EXPIRED: {
    status: 401,
    category: "authorization",
    commit: "not_committed",
    directive: "never",
    next: "escalate",
    user: "This token has expired.",
  },
  FORBIDDEN: {
    status: 403,
    category: "authorization",
    commit: "not_committed",
    directive: "never",
    next: "request_approval",
    user: "You are not allowed to do this.",
  },
  INVALID_ORIGIN: {
    status: 403,
    category: "authorization",
    commit: "not_committed",
    directive: "never",
    next: "escalate",
    user: "The request did not come from Settle.",
  },
  NOT_FOUND: {
    status: 404,
    category: "validation",
    commit: "not_committed",
    directive: "never",
    next: "correct_input",
    user: "Nothing was found there.",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "That method is not supported here.",
  },
  INVALID_JSON: {
    status: 400,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "The request body could not be parsed.",
  },
  INVALID_PROTOBUF: {
    status: 400,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "The request body could not be decoded.",
  },
  INVALID_ENCODING: {
    status: 400,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "The request body's compression could not be read.",
  },
  INVALID_REQUEST: {
    status: 400,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "The request is not valid.",
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "The request body is too large.",
  },
  TOO_MANY_RECORDS: {
    status: 413,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "Too many records in one request.",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "Unsupported content type.",
  },
  VERSION_CONFLICT: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "never",
    next: "choose_alternative",
    user: "Someone else changed this first.",
  },
  TRANSITION_REFUSED: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "never",
    next: "choose_alternative",
    user: "That action is not allowed in the current state.",
  },
  VERIFICATION_CLOSED: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "never",
    next: "none",
    user: "This verification request is already answered or closed.",
  },
  USER_EXISTS: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "Someone with that email already exists.",
  },
  LAST_ADMIN: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "never",
    next: "choose_alternative",
    user: "Settle needs at least one active admin.",
  },
  ALREADY_APPROVED: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "never",
    next: "none",
    user: "You have already approved this.",
  },
  CATALOG_ENTRY_EXISTS: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "That runtime's tool catalog already has this pattern.",
  },
  CATALOG_FULL: {
    status: 409,
    category: "conflict",
    commit: "not_committed",
    directive: "never",
    next: "choose_alternative",
    user: "That runtime's tool catalog is full.",
  },
  UNSAFE_URL: {
    status: 400,
    category: "validation",
    commit: "not_committed",
    directive: "after_input_fix",
    next: "correct_input",
    user: "That address is not allowed.",
  },
  RATE_LIMITED: {
    status: 429,
    category: "rate_limit",
    commit: "not_committed",
    directive: "after_delay",
    next: "wait_and_retry",
    user: "Too many requests; slow down.",
    delayS: 1,
    attempts: 10,
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    category: "dependency",
    commit: "not_committed",
    directive: "after_delay",
    next: "wait_and_retry",
    user: "Settle's database is unavailable; nothing was stored.",
    delayS: 30,
    attempts: 5,
  },
  MIGRATIONS_PENDING: {
    status: 503,
    category: "dependency",
    commit: "not_committed",
    directive: "after_delay",
    next: "escalate",
    user: "Settle's database needs migrating.",
    delayS: 60,
    attempts: 5,
  },
  INTERNAL: {
    status: 500,
    category: "internal",
    commit: "unknown",
    directive: "after_delay",
    next: "wait_and_retry",
    user: "Settle failed unexpectedly.",
    delayS: 5,
    attempts: 3,
  },
} satisfies Record<string, Spec>;

export type ErrorCode = keyof typeof catalog;

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly safeDetails: Record<string, unknown> = {},
  ) {
    super(message);
  }

  get status(): number {
    return catalog[this.code].status;
  }
}

/**
 * What a read or a change found, or NOT_FOUND: the one way a route answers 404 for a thing that is not there or
 * that its caller may not see (`get…` and friends return null, docs/code-style.md; the route says what was missing).
 */
export function orNotFound<T>(value: T | null | undefined | false, message: string): T {
  if (value === null || value === undefined || value === false) throw new ApiError("NOT_FOUND", message);
  return value;
}

/** "No task t1 in runtime r that you can see.": a scoped read that found nothing. */
export const notVisible = (kind: string, id: string, runtime?: string | null): string =>
  `No ${kind} ${id}${runtime ? ` in runtime ${runtime}` : ""} that you can see.`;

export function errorEnvelope(
  code: ErrorCode,
  agentMessage: string,
  operationRef: string,
  safeDetails: Record<string, unknown> = {},
  now = new Date(),
): ErrorEnvelope {
  const spec: Spec = catalog[code];
  return {
    ok: false,
    code,
    category: spec.category,
    commit_state: spec.commit,
    retry: {
      directive: spec.directive,
      not_before: spec.delayS ? new Date(now.getTime() + spec.delayS * 1000).toISOString() : null,
      max_attempts_remaining: spec.attempts ?? (spec.directive === "never" ? 0 : null),
    },
    next_action: spec.next,
    operation_ref: operationRef,
    safe_details: safeDetails,
    agent_message: agentMessage,
    user_message: spec.user,
  };
}

export function statusOf(code: ErrorCode): number {
  return catalog[code].status;
}

/** A rejected ingest record: nothing was stored, the record has to change. */
export function recordError(
  problem: { code: string; message: string; path?: string },
  operationRef: string,
): ErrorEnvelope {
  return {
    ok: false,
    code: problem.code,
    category: "validation",
    commit_state: "not_committed",
    retry: { directive: "after_input_fix", not_before: null, max_attempts_remaining: null },
    next_action: "correct_input",
    operation_ref: operationRef,
    safe_details: problem.path ? { path: problem.path } : {},
    agent_message: `Record rejected: ${problem.message} Nothing was stored for it.`,
    user_message: "One record was rejected and not stored.",
  };
}
