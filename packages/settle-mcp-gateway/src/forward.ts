import { gatewayAnswer, type AnswerFacts } from "./answers.js";
import { describeLost, outcomeEnvelope, type UpstreamAnswer } from "./outcomes.js";
import { attemptRecord, type AttemptRef } from "./records.js";
import type { SettleLink } from "./settle-link.js";
import type { Registry } from "./registry.js";

// One attempt sent to the server after Settle allowed it: the call goes out
// with the idempotency key in its _meta, the answer (or its absence) is
// reported as the attempt's outcome, and the client gets the server's answer
// unchanged — or, when none came, an answer that says the outcome is unknown.
// A timeout does not end the wait for the server: if its answer still
// arrives, it is reported too (source article 002 (docs/outcome-model.md)'s slow success), so the invocation
// settles by evidence instead of staying unknown.

export type ToolCallParams = {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [field: string]: unknown;
};

/** Sends a tools/call to the server; resolves when it answers or can no longer answer. */
export type Dispatch = (params: ToolCallParams) => Promise<UpstreamAnswer>;

export type ClientReply =
  | { kind: "result"; result: Record<string, unknown> }
  | { kind: "error"; error: { code: number; message: string; data?: unknown } }
  | { kind: "none" };

export type ForwardInput = {
  ref: AttemptRef;
  params: ToolCallParams;
  dispatch: Dispatch;
  timeoutMs: number;
  /** Aborted when the client cancels. */
  cancelled: AbortSignal;
  forwardKey: boolean;
  settle: SettleLink;
  registry: Registry;
  /** Only report (dry run, fail-open): where the records go. */
  reportTo: "settle" | "spool";
  consoleLink: string | null;
  now: () => Date;
};

export type Forwarded = { reply: ClientReply; answer: UpstreamAnswer };

/** How long a cancelled call still waits for the server's answer, which may say what happened. */
const CANCEL_GRACE_MS = 2000;

function withKey(params: ToolCallParams, ref: AttemptRef): ToolCallParams {
  return {
    ...params,
    _meta: {
      ...(params._meta ?? {}),
      "settle.dev/idempotency_key": ref.idempotencyKey,
      "settle.dev/invocation_id": ref.invocationId,
      "settle.dev/attempt": ref.attempt,
    },
  };
}

function waitFor(sent: Promise<UpstreamAnswer>, timeoutMs: number, cancelled: AbortSignal): Promise<UpstreamAnswer> {
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (answer: UpstreamAnswer) => {
      clearTimeout(timer);
      cancelled.removeEventListener("abort", onCancel);
      resolve(answer);
    };
    const onCancel = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => finish({ kind: "lost", why: "cancelled", detail: "cancelled by the client" }),
        CANCEL_GRACE_MS,
      );
    };
    timer = setTimeout(
      () => finish({ kind: "lost", why: "timeout", detail: `no answer in ${Math.round(timeoutMs / 1000)} s` }),
      timeoutMs,
    );
    if (cancelled.aborted) onCancel();
    else cancelled.addEventListener("abort", onCancel);
    void sent.then(finish);
  });
}

export function replyFor(answer: UpstreamAnswer, facts: AnswerFacts, cancelled: boolean): ClientReply {
  // A cancelled request is not answered (MCP cancellation): the client has stopped waiting.
  if (cancelled) return { kind: "none" };
  if (answer.kind === "result") return { kind: "result", result: answer.result };
  if (answer.kind === "error") return { kind: "error", error: answer.error };
  if (answer.kind === "refused")
    return {
      kind: "error",
      error: { code: -32000, message: `settle-mcp: ${answer.detail}`, data: { http_status: answer.status } },
    };
  if (answer.kind === "not_sent")
    return { kind: "result", result: gatewayAnswer("upstream_unreachable", { ...facts, detail: answer.detail }) };
  return { kind: "result", result: gatewayAnswer("lost", { ...facts, detail: describeLost(answer.why) }) };
}

export async function forwardAttempt(input: ForwardInput): Promise<Forwarded> {
  const { ref, settle } = input;
  const send = (records: Parameters<SettleLink["report"]>[0]) =>
    input.reportTo === "spool" ? settle.spool(records) : settle.report(records);
  const unguarded = input.reportTo === "spool";
  const finish = input.registry.begin(ref.idempotencyKey, ref.invocationId, unguarded);
  const sent = input.dispatch(input.forwardKey ? withKey(input.params, ref) : input.params);
  const answer = await waitFor(sent, input.timeoutMs, input.cancelled);
  const facts: AnswerFacts = {
    tool: ref.tool,
    invocationId: ref.invocationId,
    idempotencyKey: ref.idempotencyKey,
    consoleUrl: input.consoleLink,
  };

  send([attemptRecord(ref, "outcome", outcomeEnvelope(ref.tool, answer), input.now())]);
  finish({ invocationId: ref.invocationId, answer, at: Date.now(), unguarded });

  if (answer.kind === "lost") {
    void sent.then((late) => {
      if (late.kind !== "result" && late.kind !== "error") return;
      // The evidence came after all: recorded as the same attempt's outcome, which settles it.
      send([attemptRecord(ref, "outcome", outcomeEnvelope(ref.tool, late), input.now(), ":late")]);
      input.registry.begin(
        ref.idempotencyKey,
        ref.invocationId,
        unguarded,
      )({ invocationId: ref.invocationId, answer: late, at: Date.now(), unguarded });
    });
  }
  return { reply: replyFor(answer, facts, input.cancelled.aborted), answer };
}
