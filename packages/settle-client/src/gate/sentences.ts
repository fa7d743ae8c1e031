import type { ErrorEnvelope } from "../types.js";

// What the model reads when Settle answers a tool call instead of the tool:
// one plain sentence that says what happened and what not to do, returned as
// the tool's result (never thrown: a framework's retry layer retries what is
// thrown), with Settle's error envelope beside it for code that wants fields.

export type AnswerKind =
  | "already_committed"
  | "outcome_unknown"
  | "partially_applied"
  | "in_flight"
  | "retry_later"
  | "awaiting_approval"
  | "rejected"
  | "escalated"
  | "unknown_after_call"
  | "settle_unreachable"
  | "settle_refused";

export type AnswerFacts = {
  tool: string;
  invocationId: string | null;
  idempotencyKey: string;
  /** How long ago the blocking call was made, in seconds. */
  ageS?: number | null;
  /** Refused as the same call under a new key (the guard's possible_duplicate). */
  duplicate?: boolean;
  notBefore?: string | null;
  decidedBy?: string | null;
  /** A person's words to the agent, when the decision carries them (a reply with a rejection or an escalation). */
  reply?: string | null;
  detail?: string | null;
};

/** A refusal or an unknown outcome as the model sees it, with Settle's envelope and the reason in a word. */
export type Answer = { kind: AnswerKind; text: string; envelope: ErrorEnvelope & Record<string, unknown> };

type Shape = Pick<ErrorEnvelope, "code" | "category" | "commit_state" | "next_action"> & {
  directive: ErrorEnvelope["retry"]["directive"];
  text: (f: AnswerFacts) => string;
};

export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} days`;
}

/** "an identical create_refund 14 s ago" — or, under a new key, "the same create_refund call 14 s ago". */
const earlier = (f: AnswerFacts) =>
  `${f.duplicate ? "the same" : "an identical"} ${f.tool} call${f.ageS == null ? "" : ` ${formatAge(f.ageS)} ago`}`;
const newKey = (f: AnswerFacts) => (f.duplicate ? " (sent again under a new key)" : "");
const said = (f: AnswerFacts) => (f.reply ? ` They said: "${f.reply}"` : "");

const shapes: Record<AnswerKind, Shape> = {
  already_committed: {
    code: "ALREADY_COMMITTED",
    category: "conflict",
    commit_state: "committed",
    next_action: "none",
    directive: "never",
    text: (f) => `Not run: ${earlier(f)} already took effect${newKey(f)}. Use its result; do not call it again.`,
  },
  outcome_unknown: {
    code: "OUTCOME_UNKNOWN",
    category: "conflict",
    commit_state: "unknown",
    next_action: "verify_operation",
    directive: "never",
    text: (f) => `Not run: ${earlier(f)} has an unknown outcome${newKey(f)}; Settle is checking it. Do not retry.`,
  },
  partially_applied: {
    code: "PARTIALLY_APPLIED",
    category: "conflict",
    commit_state: "partial",
    next_action: "verify_operation",
    directive: "never",
    text: (f) =>
      `Not run: ${earlier(f)} was applied only in part${newKey(f)}. Do not repeat it whole; retry only the items that were not applied, as a new call.`,
  },
  in_flight: {
    code: "IN_FLIGHT",
    category: "conflict",
    commit_state: "unknown",
    next_action: "wait_and_retry",
    directive: "never",
    text: (f) => `Not run: ${earlier(f)} is still in progress${newKey(f)}. Wait for its result; do not call it again.`,
  },
  retry_later: {
    code: "RETRY_LATER",
    category: "rate_limit",
    commit_state: "not_committed",
    next_action: "wait_and_retry",
    directive: "after_delay",
    text: (f) =>
      `Not run: the service asked to wait before ${f.tool} is tried again${f.notBefore ? `, until ${f.notBefore}` : ""}. Nothing happened; try again after that.`,
  },
  awaiting_approval: {
    code: "AWAITING_APPROVAL",
    category: "authorization",
    commit_state: "not_committed",
    next_action: "request_approval",
    directive: "never",
    text: (f) =>
      `Not run yet: ${f.tool} needs a person's approval in Settle. Tell the user it awaits approval; call it again once it is approved.`,
  },
  rejected: {
    code: "REJECTED",
    category: "authorization",
    commit_state: "not_committed",
    next_action: "choose_alternative",
    directive: "never",
    text: (f) =>
      `Not run: ${f.tool} was rejected${f.decidedBy ? ` by ${f.decidedBy}` : ""} in Settle.${said(f)} Do not try it again; choose another way or ask the user.`,
  },
  escalated: {
    code: "ESCALATED",
    category: "authorization",
    commit_state: "not_committed",
    next_action: "escalate",
    directive: "never",
    text: (f) =>
      `Not run: ${f.tool} was escalated${f.decidedBy ? ` by ${f.decidedBy}` : ""} in Settle and waits for a person's decision.${said(f)} Tell the user; do not call it again until it is decided.`,
  },
  unknown_after_call: {
    code: "OUTCOME_UNKNOWN",
    category: "dependency",
    commit_state: "unknown",
    next_action: "verify_operation",
    directive: "never",
    text: (f) =>
      `Unknown outcome: ${f.tool} failed after it was sent${f.detail ? ` (${f.detail})` : ""}, so whether it took effect is not known; Settle is checking it. Do not retry.`,
  },
  settle_unreachable: {
    code: "SETTLE_UNREACHABLE",
    category: "dependency",
    commit_state: "not_committed",
    next_action: "wait_and_retry",
    directive: "after_delay",
    text: (f) =>
      `Not run: Settle, which must vouch for ${f.tool} before it runs, cannot be reached. Nothing happened; try again later.`,
  },
  settle_refused: {
    code: "SETTLE_REFUSED",
    category: "validation",
    commit_state: "not_committed",
    next_action: "escalate",
    directive: "never",
    text: (f) =>
      `Not run: Settle refused to record this ${f.tool} call${f.detail ? ` (${f.detail})` : ""}. Nothing happened; tell the user the agent's Settle setup must be fixed.`,
  },
};

export function answerFor(kind: AnswerKind, facts: AnswerFacts): Answer {
  const shape = shapes[kind];
  const text = shape.text(facts);
  return {
    kind,
    text,
    envelope: {
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
      safe_details: { tool: facts.tool, idempotency_key: facts.idempotencyKey },
      agent_message: text,
      user_message: text,
      invocation_id: facts.invocationId,
    },
  };
}
