import type { AnswerFacts, CallToolResult } from "./answers.js";
import type { Elicit } from "./approval.js";
import type { EffectClass, EffectOrUnclassified, GatewayConfig, ToolRule } from "./config.js";
import type { ToolAnnotations } from "./effects.js";
import type { ClientReply, Dispatch, ToolCallParams } from "./forward.js";
import type { CallIdentity } from "./identity.js";
import type { AttemptRef } from "./records.js";
import type { Registry } from "./registry.js";
import type { SettleLink } from "./settle-link.js";

// One tools/call as the gateway carries it (tool-call.ts): what it was given, what it read of the call, and the
// trail its one log line is written from; with the small helpers every step uses.

export type CallLog = {
  tool: string;
  invocation: string | null;
  attempt: number | null;
  effect: EffectOrUnclassified;
  decision: string;
  upstream?: string;
  ms: number;
  /** Of `ms`, the time spent waiting for Settle's guard. */
  guard_ms: number;
};

export type GatewayDeps = {
  config: GatewayConfig;
  settle: SettleLink;
  registry: Registry;
  annotations: (tool: string) => ToolAnnotations | undefined;
  /** The class Settle's tool catalog gives the tool (settle_catalog), or null. */
  settleCatalog?: (tool: string) => EffectClass | null;
  log: (line: CallLog) => void;
  consoleLink: (invocationId: string) => string | null;
  now: () => Date;
};

export type ClientCall = {
  params: ToolCallParams;
  headers?: Record<string, string | undefined>;
  sessionTask: string;
  cancelled: AbortSignal;
  elicit: Elicit | null;
};

export type Call = {
  deps: GatewayDeps;
  client: ClientCall;
  dispatch: Dispatch;
  rule: ToolRule | null;
  effect: EffectOrUnclassified;
  effectSource: string;
  id: CallIdentity;
  timeoutMs: number;
  started: number;
  /** What the gateway did with the call, step by step: one log line says it all at the end. */
  trail: {
    decisions: string[];
    invocation: string | null;
    attempt: number | null;
    upstream?: string;
    settleMs: number;
  };
};

export const ref = (c: Call, invocationId: string, attempt: number, taskId = c.id.taskId): AttemptRef => ({
  taskId,
  invocationId,
  attempt,
  tool: c.client.params.name,
  idempotencyKey: c.id.idempotencyKey,
  effect: c.effect,
  argsDigest: c.id.argsDigest,
  arguments: c.id.arguments,
});

export function logCall(
  c: Call,
  decision: string,
  invocation: string | null,
  attempt: number | null,
  upstream?: string,
): void {
  c.trail.decisions.push(decision);
  if (invocation !== null) c.trail.invocation = invocation;
  if (attempt !== null) c.trail.attempt = attempt;
  if (upstream) c.trail.upstream = upstream;
}

export function writeLog(c: Call): void {
  const { decisions, invocation, attempt, upstream, settleMs } = c.trail;
  c.deps.log({
    tool: c.client.params.name,
    invocation,
    attempt,
    effect: c.effect,
    decision: decisions.join(">") || "none",
    ...(upstream ? { upstream } : {}),
    ms: Date.now() - c.started,
    guard_ms: settleMs,
  });
}

export const facts = (c: Call, invocationId: string | null, extra: Partial<AnswerFacts> = {}): AnswerFacts => ({
  tool: c.client.params.name,
  invocationId,
  idempotencyKey: c.id.idempotencyKey,
  consoleUrl: invocationId ? c.deps.consoleLink(invocationId) : null,
  ...extra,
});

export const answer = (result: CallToolResult): ClientReply => ({ kind: "result", result });
export const upstreamLabel = (a: { kind: string; why?: string }) => (a.why ? `${a.kind}:${a.why}` : a.kind);
