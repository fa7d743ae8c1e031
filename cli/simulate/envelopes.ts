import type { Rng } from "./rng";

// Tool results in every dialect of docs/outcome-model.md §3, grouped by what they mean. Each
// builder says which dialect Settle should detect, so the run can report
// what it sent and check what Settle read.

export type Dialect =
  | "settle"
  | "seed001"
  | "seed002"
  | "seed003"
  | "seed004"
  | "rfc9457"
  | "mcp"
  | "anthropic"
  | "openai"
  | "unrecognized";
export type Sent = { envelope: unknown; dialect: Dialect; wrapper: Dialect | null; variant: string };
export type EnvelopeInput = { rng: Rng; ref: string; tool: string; isRead: boolean; invocationId: string };
type Builder = (input: EnvelopeInput) => Sent;

const sent = (variant: string, dialect: Dialect, envelope: unknown, wrapper: Dialect | null = null): Sent => ({
  envelope,
  dialect,
  wrapper,
  variant,
});
const json = (value: unknown) => JSON.stringify(value);
const toolUseId = (rng: Rng) => `toolu_01${rng.hex(22)}`;
const callId = (rng: Rng) => `call_${rng.hex(24)}`;

// --- the effect landed ------------------------------------------------------

export const success = {
  settle: ({ ref, tool }) =>
    sent("settle ToolSuccess", "settle", {
      ok: true,
      commit_state: "committed",
      operation_ref: ref,
      agent_message: `${tool} completed.`,
      safe_details: { receipt: `rcpt_${ref.slice(-6)}` },
    }),
  seed002: ({ ref }) =>
    sent("seed002 ok", "seed002", {
      outcome: "ok",
      effect_applied: "yes",
      attempt_id: ref,
      retry_after_s: null,
      deadline_left_s: 31,
      message: "201 Created",
    }),
  mcpText: ({ tool }) =>
    sent("mcp text", "mcp", { content: [{ type: "text", text: `${tool}: done.` }], isError: false }),
  mcpStructured: ({ ref }) =>
    sent(
      "mcp structuredContent",
      "seed002",
      {
        content: [{ type: "text", text: "Done." }],
        structuredContent: { outcome: "ok", effect_applied: "yes", attempt_id: ref },
        isError: false,
      },
      "mcp",
    ),
  anthropic: ({ rng, tool }) =>
    sent("anthropic tool_result", "anthropic", {
      type: "tool_result",
      tool_use_id: toolUseId(rng),
      content: `${tool} succeeded.`,
      is_error: false,
    }),
  openaiJson: ({ rng, ref }) =>
    sent(
      "openai function_call_output (seed002 inside)",
      "seed002",
      {
        type: "function_call_output",
        call_id: callId(rng),
        output: json({ outcome: "ok", effect_applied: "yes", attempt_id: ref }),
      },
      "openai",
    ),
  seed004: ({ invocationId }) =>
    sent("seed004 committed", "seed004", { status: "committed", invocation_id: invocationId, retryable: false }),
} satisfies Record<string, Builder>;

/** OpenAI's output has no error flag: only a read's plain text output is a success. */
export const readSuccess = {
  openaiText: ({ rng }) =>
    sent("openai function_call_output (text)", "openai", {
      type: "function_call_output",
      call_id: callId(rng),
      output: `{"price": ${rng.int(5, 900)}.${rng.int(10, 99)}, "currency": "EUR"}`,
    }),
} satisfies Record<string, Builder>;

// --- nobody can tell whether a write landed --------------------------------

export const unknown = {
  settle: ({ ref }) =>
    sent("settle ToolError unknown", "settle", {
      ok: false,
      code: "OUTCOME_UNKNOWN",
      category: "dependency",
      commit_state: "unknown",
      retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
      next_action: "verify_operation",
      operation_ref: ref,
      agent_message: "The connection dropped after the request was sent. Verify operation_ref before any new write.",
      user_message: "We are checking whether this went through.",
    }),
  seed002: ({ ref }) =>
    sent("seed002 unknown", "seed002", {
      outcome: "unknown",
      effect_applied: "unknown",
      attempt_id: ref,
      message: "connection reset after 8.1s; no response body",
    }),
  seed001: () =>
    sent("seed001 retryable", "seed001", {
      code: "UPSTREAM_TIMEOUT",
      message: "The upstream API timed out.",
      retryable: true,
      hint: "Try again later.",
      field: null,
    }),
  seed003: () =>
    sent("seed003 stop_turn", "seed003", {
      kind: "tool_error",
      is_error: true,
      error: "HANDLER_CRASHED",
      message: "The tool handler failed unexpectedly.",
      recovery: "stop_turn",
      recoverable: false,
    }),
  rfc9457: () =>
    sent("rfc9457 504", "rfc9457", {
      type: "about:blank",
      title: "Gateway Timeout",
      status: 504,
      detail: "The upstream did not answer within 30 s.",
    }),
  mcpErrorText: () =>
    sent("mcp isError text", "mcp", {
      content: [{ type: "text", text: "MCP error -32602: Invalid params: amount" }],
      isError: true,
    }),
  mcpJson: ({ ref }) =>
    sent(
      "mcp text holding a settle envelope",
      "settle",
      {
        content: [
          {
            type: "text",
            text: json({
              ok: false,
              code: "OUTCOME_UNKNOWN",
              commit_state: "unknown",
              next_action: "verify_operation",
              operation_ref: ref,
              retry: { directive: "never", max_attempts_remaining: 0 },
            }),
          },
        ],
        isError: true,
      },
      "mcp",
    ),
  anthropic: ({ rng }) =>
    sent("anthropic is_error", "anthropic", {
      type: "tool_result",
      tool_use_id: toolUseId(rng),
      content: "Error: upstream closed the connection",
      is_error: true,
    }),
  openaiText: ({ rng }) =>
    sent("openai text output on a write", "openai", {
      type: "function_call_output",
      call_id: callId(rng),
      output: "Request sent.",
    }),
  unrecognized: () => sent("unrecognized", "unrecognized", { error: "HTTP 500 from /orders" }),
} satisfies Record<string, Builder>;

// --- refused, nothing changed, a later retry may work ----------------------

export const retryLater = {
  rfc9457RateLimit: () =>
    sent("rfc9457 429 (Cloudflare fields)", "rfc9457", {
      type: "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-1xxx-errors/error-1015/",
      title: "You are being rate limited",
      status: 429,
      detail: "Too many requests from this account; retry after 30 seconds.",
      error_code: 1015,
      error_name: "rate_limited",
      error_category: "rate_limit",
      retryable: true,
      retry_after: 30,
      owner_action_required: false,
    }),
  seed002: ({ ref }) =>
    sent("seed002 retryable", "seed002", {
      outcome: "retryable",
      effect_applied: "no",
      attempt_id: ref,
      retry_after_s: 20,
      deadline_left_s: 40,
      message: "503 from upstream before any write",
    }),
} satisfies Record<string, Builder>;

/** A read that failed changed nothing, whatever the dialect says. */
export const readFailure = {
  rfc9457: () =>
    sent("rfc9457 503 on a read", "rfc9457", {
      type: "about:blank",
      title: "Service Unavailable",
      status: 503,
      detail: "Pricing service is restarting.",
    }),
  seed001: () =>
    sent("seed001 retryable on a read", "seed001", {
      code: "UPSTREAM_TIMEOUT",
      message: "Timed out.",
      retryable: true,
      hint: "Retry with backoff.",
      field: null,
    }),
} satisfies Record<string, Builder>;

// --- the request must change ------------------------------------------------

export const inputError = {
  seed001: () =>
    sent("seed001 field", "seed001", {
      code: "INVALID_RECIPIENT",
      message: "The address is not deliverable.",
      retryable: false,
      hint: "Check the email address.",
      field: "to",
    }),
  rfc9457: () =>
    sent("rfc9457 422 with a pointer", "rfc9457", {
      type: "https://api.example.com/problems/validation",
      title: "Validation failed",
      status: 422,
      detail: "amount must be positive",
      "invalid-params": [{ name: "amount", pointer: "/amount", reason: "must be positive" }],
    }),
  seed003: () =>
    sent("seed003 correct_arguments", "seed003", {
      kind: "tool_error",
      is_error: true,
      error: "BAD_DATE",
      message: "date must be in the future",
      recovery: "correct_arguments",
    }),
  settle: ({ ref }) =>
    sent("settle ToolError validation", "settle", {
      ok: false,
      code: "INVALID_ARGUMENT",
      category: "validation",
      commit_state: "not_committed",
      retry: { directive: "after_input_fix", not_before: null, max_attempts_remaining: 1 },
      next_action: "correct_input",
      operation_ref: ref,
      safe_details: { field: "currency" },
    }),
} satisfies Record<string, Builder>;

// --- the tool refused: a person decides --------------------------------------

export const refusal = {
  seed001: () =>
    sent("seed001 refusal", "seed001", {
      code: "ACCOUNT_FROZEN",
      message: "The account is frozen.",
      retryable: false,
      hint: "Contact the account owner.",
      field: null,
    }),
  rfc9457: () =>
    sent("rfc9457 403 owner action", "rfc9457", {
      type: "https://api.example.com/problems/forbidden",
      title: "Forbidden",
      status: 403,
      detail: "The API token lacks the payments scope.",
      owner_action_required: true,
    }),
} satisfies Record<string, Builder>;

export const permanent = {
  seed002: ({ ref }) =>
    sent("seed002 permanent", "seed002", {
      outcome: "permanent",
      effect_applied: "no",
      attempt_id: ref,
      message: "SKU discontinued",
    }),
  anthropicSeed003: ({ rng }) =>
    sent(
      "anthropic tool_result holding seed003",
      "seed003",
      {
        type: "tool_result",
        tool_use_id: toolUseId(rng),
        content: json({
          kind: "tool_error",
          is_error: true,
          error: "WINDOW_CLOSED",
          message: "The refund window has closed.",
          recovery: "choose_alternative",
        }),
        is_error: true,
      },
      "anthropic",
    ),
} satisfies Record<string, Builder>;

export const approval = {
  settle: ({ ref }) =>
    sent("settle ToolError request_approval", "settle", {
      ok: false,
      code: "APPROVAL_REQUIRED",
      category: "authorization",
      commit_state: "not_committed",
      retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
      next_action: "request_approval",
      operation_ref: ref,
      agent_message: "Amounts over 1,000 EUR need a manager's approval.",
      user_message: "This payment is waiting for approval.",
    }),
} satisfies Record<string, Builder>;

export function evidenceFailed(invocationId: string): Sent {
  return sent("seed004 post_dispatch_evidence_failed", "seed004", {
    status: "post_dispatch_evidence_failed",
    retryable: false,
    reconciliation_required: true,
    invocation_id: invocationId,
  });
}

export function partialBatch(
  ref: string,
  items: Array<{ id: string; applied: "yes" | "no" | "unknown"; reason?: string }>,
): Sent {
  const done = items.filter((i) => i.applied === "yes").length;
  return sent("seed002 partial", "seed002", {
    outcome: "permanent",
    effect_applied: "partial",
    attempt_id: ref,
    items,
    message: `${done} of ${items.length} rows written; ${items.filter((i) => i.applied === "no").length} blocked, ${items.filter((i) => i.applied === "unknown").length} unresolved`,
  });
}

/** What a probe (a read of the business system by idempotency key) returns. */
export const probe = {
  found: (ref: string) =>
    sent("probe found", "seed002", {
      outcome: "ok",
      effect_applied: "yes",
      attempt_id: ref,
      message: "found by idempotency key",
    }),
  absent: (ref: string) =>
    sent("probe absent", "seed002", {
      outcome: "ok",
      effect_applied: "no",
      attempt_id: ref,
      message: "no object with this idempotency key",
    }),
  failed: () =>
    sent("probe failed", "rfc9457", {
      type: "about:blank",
      title: "Service Unavailable",
      status: 503,
      detail: "lookup endpoint unavailable",
    }),
};

export function pickBuilder(rng: Rng, builders: Record<string, Builder>): Builder {
  return rng.pick(Object.values(builders));
}
