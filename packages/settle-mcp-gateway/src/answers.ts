// What the client gets when the gateway answers a tools/call itself instead
// of the server: a CallToolResult with isError true (the call was not made,
// or its outcome is not known), one line of text a model can act on, and
// Settle's own envelope (docs/outcome-model.md §2, source article 000 (docs/outcome-model.md)'s shape) in structuredContent,
// with the invocation, its commit state, what to do next and not_before.
// A client validates structuredContent against a tool's output schema only
// when isError is false, so these answers are valid for any tool.

export type CallToolResult = {
  content: Array<Record<string, unknown>>;
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
};

export type AnswerKind =
  | "already_committed"
  | "outcome_unknown"
  | "in_flight"
  | "retry_later"
  | "awaiting_approval"
  | "rejected"
  | "escalated"
  | "settle_unreachable"
  | "settle_refused_key"
  | "settle_refused"
  | "settle_refused_setup"
  | "invalid_call"
  | "upstream_unreachable"
  | "lost";

export type AnswerFacts = {
  tool: string;
  invocationId: string | null;
  idempotencyKey: string;
  status?: string | null;
  notBefore?: string | null;
  consoleUrl?: string | null;
  detail?: string;
  decidedBy?: string | null;
  /** A person's words to the agent with a rejection or an escalation (Settle's decision API), quoted to the model. */
  reply?: string | null;
};

type Shape = {
  code: string;
  category: string;
  commit_state: string;
  directive: string;
  next_action: string;
  text: (f: AnswerFacts) => string;
};

const link = (f: AnswerFacts) => (f.consoleUrl ? ` See ${f.consoleUrl}` : "");
const said = (f: AnswerFacts) => (f.reply ? ` They said: "${f.reply}"` : "");
const inv = (f: AnswerFacts) => (f.invocationId ? ` (Settle invocation ${f.invocationId})` : "");

const shapes: Record<AnswerKind, Shape> = {
  already_committed: {
    code: "ALREADY_COMMITTED",
    category: "conflict",
    commit_state: "committed",
    directive: "never",
    next_action: "none",
    text: (f) =>
      `Not repeated: this ${f.tool} call already took effect${inv(f)}. Use its earlier result; do not call it again.${f.detail ? ` ${f.detail}` : ""}`,
  },
  outcome_unknown: {
    code: "OUTCOME_UNKNOWN",
    category: "conflict",
    commit_state: "unknown",
    directive: "never",
    next_action: "verify_operation",
    text: (f) =>
      `Not called: an earlier identical ${f.tool} call may or may not have taken effect${inv(f)}, and a person is checking. Do not retry it; tell the user it is being verified.${link(f)}`,
  },
  in_flight: {
    code: "IN_FLIGHT",
    category: "conflict",
    commit_state: "unknown",
    directive: "never",
    next_action: "wait_and_retry",
    text: (f) =>
      `Not called: an identical ${f.tool} call is still in progress${inv(f)}. Wait for it instead of calling again.`,
  },
  retry_later: {
    code: "RETRY_LATER",
    category: "rate_limit",
    commit_state: "not_committed",
    directive: "after_delay",
    next_action: "wait_and_retry",
    text: (f) =>
      `Not called: the server asked to wait before ${f.tool} is tried again${f.notBefore ? `, until ${f.notBefore}` : ""}${inv(f)}. Try again after that.`,
  },
  awaiting_approval: {
    code: "AWAITING_APPROVAL",
    category: "authorization",
    commit_state: "not_committed",
    directive: "never",
    next_action: "request_approval",
    text: (f) =>
      `Not called yet: ${f.tool} needs a person's approval in Settle${inv(f)}. Tell the user it awaits approval; call it again once approved.${link(f)}`,
  },
  rejected: {
    code: "REJECTED",
    category: "authorization",
    commit_state: "not_committed",
    directive: "never",
    next_action: "choose_alternative",
    text: (f) =>
      `Not called: ${f.tool} was rejected${f.decidedBy ? ` by ${f.decidedBy}` : ""}${inv(f)}.${said(f)} Do not try it again; choose another way or ask the user.`,
  },
  escalated: {
    code: "ESCALATED",
    category: "authorization",
    commit_state: "not_committed",
    directive: "never",
    next_action: "escalate",
    text: (f) =>
      `Not called: ${f.tool} was escalated${f.decidedBy ? ` by ${f.decidedBy}` : ""}${inv(f)} and waits for a person's decision.${said(f)} Tell the user; do not call it again until it is decided.${link(f)}`,
  },
  settle_unreachable: {
    code: "SETTLE_UNREACHABLE",
    category: "dependency",
    commit_state: "not_committed",
    directive: "after_delay",
    next_action: "wait_and_retry",
    text: (f) =>
      `Not called: Settle, which must vouch for ${f.tool} before it runs, cannot be reached. Nothing happened; try again later.`,
  },
  settle_refused_key: {
    code: "SETTLE_REFUSED",
    category: "authorization",
    commit_state: "not_committed",
    directive: "never",
    next_action: "escalate",
    text: (f) =>
      `Not called: Settle refused the gateway's runtime key (${f.detail ?? "unauthorized"}), so nothing can vouch for ${f.tool}. Nothing happened; tell the user the gateway's Settle key must be fixed.`,
  },
  settle_refused: {
    code: "SETTLE_REFUSED",
    category: "validation",
    commit_state: "not_committed",
    directive: "after_input_fix",
    next_action: "correct_input",
    text: (f) =>
      `Not called: Settle refused to record this ${f.tool} call (${f.detail ?? "invalid request"}). Nothing happened; correct the call before trying again.`,
  },
  settle_refused_setup: {
    code: "SETTLE_REFUSED",
    category: "dependency",
    commit_state: "not_committed",
    directive: "never",
    next_action: "escalate",
    text: (f) =>
      `Not called: Settle's guard answered ${f.detail ?? "with an error"}, so nothing can vouch for ${f.tool}. Nothing happened; tell the user the gateway's Settle address or setup must be fixed.`,
  },
  invalid_call: {
    code: "INVALID_REQUEST",
    category: "validation",
    commit_state: "not_committed",
    directive: "after_input_fix",
    next_action: "correct_input",
    text: (f) => `Not called: ${f.detail ?? "the call is invalid"}. Nothing happened.`,
  },
  upstream_unreachable: {
    code: "UPSTREAM_UNREACHABLE",
    category: "dependency",
    commit_state: "not_committed",
    directive: "after_delay",
    next_action: "wait_and_retry",
    text: (f) =>
      `Not called: the server behind the gateway cannot be reached (${f.detail ?? "no connection"}). Nothing happened; try again later.`,
  },
  lost: {
    code: "OUTCOME_UNKNOWN",
    category: "dependency",
    commit_state: "unknown",
    directive: "never",
    next_action: "verify_operation",
    text: (f) =>
      `Unknown outcome: ${f.detail ?? "the answer was lost"}, so whether ${f.tool} took effect is not known${inv(f)}. Do not call it again; a person will check.${link(f)}`,
  },
};

export function gatewayAnswer(kind: AnswerKind, facts: AnswerFacts): CallToolResult {
  const shape = shapes[kind];
  const text = shape.text(facts);
  return {
    content: [{ type: "text", text }],
    isError: true,
    structuredContent: {
      ok: false,
      code: shape.code,
      category: shape.category,
      commit_state: shape.commit_state,
      retry: {
        directive: shape.directive,
        not_before: facts.notBefore ?? null,
        max_attempts_remaining: shape.directive === "never" ? 0 : null,
      },
      next_action: shape.next_action,
      operation_ref: facts.invocationId ?? facts.idempotencyKey,
      safe_details: { tool: facts.tool, idempotency_key: facts.idempotencyKey, status: facts.status ?? null },
      agent_message: text,
      user_message: text,
      invocation_id: facts.invocationId,
      not_before: facts.notBefore ?? null,
      console_url: facts.consoleUrl ?? null,
    },
  };
}

/** A committed call answered again with its stored result, marked so the client can tell. */
export function replayAnswer(stored: CallToolResult, invocationId: string): CallToolResult {
  return { ...stored, _meta: { ...(stored._meta ?? {}), "settle.dev/replayed": { invocation_id: invocationId } } };
}

export function isCallToolResult(value: unknown): value is CallToolResult {
  return typeof value === "object" && value !== null && Array.isArray((value as { content?: unknown }).content);
}
