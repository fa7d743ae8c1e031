import { randomUUID } from "node:crypto";
import type { GuardAnswer } from "@settle/client";
import { gatewayAnswer, isCallToolResult, replayAnswer, type AnswerFacts, type CallToolResult } from "./answers.js";
import { approvedSinceRequest, holdForApproval, type Elicit } from "./approval.js";
import { policyFor, type EffectClass, type EffectOrUnclassified, type GatewayConfig, type ToolRule } from "./config.js";
import { classifyEffect, ruleFor, type ToolAnnotations } from "./effects.js";
import { fitEnvelope } from "./fit.js";
import { forwardAttempt, replyFor, type ClientReply, type Dispatch, type ToolCallParams } from "./forward.js";
import { identify, resolveTask, withKeyArg, type CallIdentity } from "./identity.js";
import { intentEnvelope, outcomeEnvelope } from "./outcomes.js";
import { probeEnvelope, runProbe } from "./probe.js";
import { approvalRequestEnvelope, attemptRecord, type AttemptRef } from "./records.js";
import { standingOfAnswer, type Registry } from "./registry.js";
import { isRefused, isUnreachable, type Refused, type SettleLink } from "./settle-link.js";

// Every tools/call, whatever the transport: identities, effect class, the
// guard first (the intent is written before dispatch), then forward and
// report — or answer the client without calling the server, because an
// identical call already took effect, may have, is in flight, waits for a
// person, or was told to wait. Denials are followed through where the
// gateway can settle them itself: a twin in flight here is joined, an
// unknown outcome is probed when a probe is configured, an approval is
// waited for, and an invocation Settle says may go again is guarded again.

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

type Call = {
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

const MAX_ROUNDS = 4;
/** Settle's limit on a tool's name: a longer one could not be recorded, so it is refused before anything reads it. */
export const TOOL_NAME_MAX = 200;

const ref = (c: Call, invocationId: string, attempt: number, taskId = c.id.taskId): AttemptRef => ({
  taskId,
  invocationId,
  attempt,
  tool: c.client.params.name,
  idempotencyKey: c.id.idempotencyKey,
  effect: c.effect,
  argsDigest: c.id.argsDigest,
});

function logCall(
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

function writeLog(c: Call): void {
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

const facts = (c: Call, invocationId: string | null, extra: Partial<AnswerFacts> = {}): AnswerFacts => ({
  tool: c.client.params.name,
  invocationId,
  idempotencyKey: c.id.idempotencyKey,
  consoleUrl: invocationId ? c.deps.consoleLink(invocationId) : null,
  ...extra,
});

const answer = (result: CallToolResult): ClientReply => ({ kind: "result", result });
const upstreamLabel = (a: { kind: string; why?: string }) => (a.why ? `${a.kind}:${a.why}` : a.kind);

async function forward(
  c: Call,
  invocationId: string,
  attempt: number,
  decision: string,
  reportTo: "settle" | "spool" = "settle",
): Promise<ClientReply> {
  const { reply, answer: got } = await forwardAttempt({
    ref: ref(c, invocationId, attempt),
    params: c.client.params,
    dispatch: c.dispatch,
    timeoutMs: c.timeoutMs,
    cancelled: c.client.cancelled,
    forwardKey: c.deps.config.forward_key,
    settle: c.deps.settle,
    registry: c.deps.registry,
    reportTo,
    consoleLink: c.deps.consoleLink(invocationId),
    now: c.deps.now,
  });
  logCall(c, decision, invocationId, attempt, upstreamLabel(got));
  return reply;
}

/** Records that make a call Settle never guarded visible all the same: its intent and its outcome. */
async function forwardUnguarded(
  c: Call,
  invocationId: string,
  decision: string,
  reportTo: "settle" | "spool",
): Promise<ClientReply> {
  const intent = attemptRecord(
    ref(c, invocationId, 1),
    "intent",
    intentEnvelope(c.client.params, decision, { effect: c.effect, source: c.effectSource }),
    c.deps.now(),
  );
  if (reportTo === "spool") c.deps.settle.spool([intent]);
  else c.deps.settle.report([intent]);
  return forward(c, invocationId, 1, decision, reportTo);
}

/** A twin of this call is in flight in this process: its answer is this call's answer. */
async function join(
  c: Call,
  twin: { invocationId: string; done: Promise<{ answer: Parameters<typeof replyFor>[0] }> },
): Promise<ClientReply> {
  const { answer: got } = await twin.done;
  logCall(c, "joined", twin.invocationId, null, upstreamLabel(got));
  if (got.kind === "result" && standingOfAnswer(got) === "committed")
    return answer(replayAnswer(got.result as CallToolResult, twin.invocationId));
  return replyFor(got, facts(c, twin.invocationId), c.client.cancelled.aborted);
}

async function storedResult(c: Call, invocationId: string): Promise<CallToolResult | null> {
  const local = c.deps.registry.committedResult(c.id.idempotencyKey, invocationId);
  if (local) return local;
  const detail = await c.deps.settle.getInvocation(invocationId);
  if (isUnreachable(detail)) return null;
  const committed = detail.attempts.filter(
    (a) => a.phase === "outcome" && a.commit_state === "committed" && isCallToolResult(a.envelope),
  );
  return (committed.at(-1)?.envelope as CallToolResult | undefined) ?? null;
}

async function answerCommitted(c: Call, invocationId: string, detail?: string): Promise<ClientReply> {
  const policy = policyFor(c.deps.config, c.effect);
  if (c.rule?.replay ?? policy.replay) {
    const stored = await storedResult(c, invocationId);
    if (stored) {
      logCall(c, "replayed", invocationId, null);
      return answer(replayAnswer(stored, invocationId));
    }
  }
  logCall(c, "denied:already_committed", invocationId, null);
  return answer(gatewayAnswer("already_committed", facts(c, invocationId, { detail })));
}

type Next = { reply: ClientReply } | { retry: string };

/** After a probe, what Settle now says: committed, may go again, or still unknown. */
async function probeThenDecide(c: Call, denied: GuardAnswer): Promise<Next | null> {
  const probe = c.rule?.probe;
  if (!probe) return null;
  const finding = await runProbe(
    probe,
    c.dispatch,
    { idempotencyKey: c.id.idempotencyKey, invocationId: denied.invocation_id, args: c.client.params.arguments },
    c.timeoutMs,
  );
  if ("unreached" in finding) {
    // The server could not be asked (it is down): nothing was measured, so nothing is recorded; the next re-issue asks again.
    logCall(c, "probe:unreached", denied.invocation_id, denied.attempt);
    return null;
  }
  const version = await c.deps.settle.getDecision(denied.invocation_id);
  const suffix = `:${isUnreachable(version) ? randomUUID() : `v${version.version}`}`;
  await c.deps.settle.reportNow([
    attemptRecord(
      ref(c, denied.invocation_id, Math.max(denied.attempt, 1)),
      "probe",
      probeEnvelope(probe.tool, finding),
      c.deps.now(),
      suffix,
    ),
  ]);
  const label = "failed" in finding ? "probe:failed" : finding.found ? "probe:found" : "probe:absent";
  logCall(c, label, denied.invocation_id, denied.attempt);
  if ("failed" in finding) return null;
  if (finding.found) return { reply: await answerCommitted(c, denied.invocation_id, `It was found by ${probe.tool}.`) };
  return { retry: denied.invocation_id };
}

async function onDenied(c: Call, denied: GuardAnswer): Promise<Next> {
  const { settle, config } = c.deps;
  const inv = denied.invocation_id;
  if (denied.reason === "already_committed") return { reply: await answerCommitted(c, inv) };
  const decision = await settle.getDecision(inv);
  const known = isUnreachable(decision) ? null : decision;
  if (known && (known.decision === "retry_allowed" || known.decision === "proceed")) return { retry: inv };
  if (denied.reason === "outcome_unknown") {
    const probed =
      known && (known.decision === "verify" || known.status === "outcome_unknown" || known.status === "stalled")
        ? await probeThenDecide(c, denied)
        : null;
    if (probed) return probed;
    logCall(c, "denied:outcome_unknown", inv, denied.attempt);
    return { reply: answer(gatewayAnswer("outcome_unknown", facts(c, inv, { status: known?.status ?? null }))) };
  }
  if (known?.status === "awaiting_approval") return approve(c, inv);
  if (known?.status === "retry_scheduled") {
    const detail = await settle.getInvocation(inv);
    const notBefore = isUnreachable(detail) ? null : ((detail.not_before as string | null) ?? null);
    logCall(c, "denied:retry_later", inv, denied.attempt);
    return { reply: answer(gatewayAnswer("retry_later", facts(c, inv, { notBefore, status: known.status }))) };
  }
  // In flight elsewhere (another gateway, an earlier session): wait a while for its outcome, then look again.
  if (config.in_flight_wait_s > 0) {
    const seen = known;
    const changed = await settle.awaitDecision(
      inv,
      config.in_flight_wait_s * 1000,
      (d) => !seen || d.version !== seen.version || d.status !== seen.status,
    );
    if (!isUnreachable(changed) && seen && (changed.version !== seen.version || changed.status !== seen.status))
      return { retry: "" };
  }
  logCall(c, "denied:in_flight", inv, denied.attempt);
  return { reply: answer(gatewayAnswer("in_flight", facts(c, inv, { status: known?.status ?? null }))) };
}

/** Records the request for approval (if not yet) and holds the call for the decision. */
async function approve(c: Call, invocationId: string, attempt?: number): Promise<Next> {
  const { settle, config } = c.deps;
  if (attempt !== undefined)
    await settle.reportNow([
      attemptRecord(
        ref(c, invocationId, attempt),
        "outcome",
        approvalRequestEnvelope(c.client.params.name),
        c.deps.now(),
        ":approval",
      ),
    ]);
  const link = c.deps.consoleLink(invocationId);
  const held = await holdForApproval(settle, invocationId, {
    waitMs: config.approval_wait_s * 1000,
    tool: c.client.params.name,
    link,
    elicit: config.elicitation ? c.client.elicit : null,
  });
  if (held.kind === "proceed") return { retry: invocationId };
  if (held.kind === "rejected") {
    logCall(c, "rejected", invocationId, null);
    return { reply: answer(gatewayAnswer("rejected", facts(c, invocationId, { decidedBy: held.decidedBy }))) };
  }
  logCall(c, "awaiting_approval", invocationId, attempt ?? null);
  return {
    reply: answer(
      gatewayAnswer(
        "awaiting_approval",
        facts(c, invocationId, { status: held.kind === "waiting" ? held.status : null }),
      ),
    ),
  };
}

async function needsApprovalNow(c: Call, allowed: GuardAnswer, approved: Set<string>): Promise<boolean> {
  const policy = policyFor(c.deps.config, c.effect);
  if (!(c.rule?.approval ?? policy.approval)) return false;
  if (approved.has(allowed.invocation_id)) return false;
  if (allowed.attempt <= 1) return true;
  const detail = await c.deps.settle.getInvocation(allowed.invocation_id);
  return isUnreachable(detail) || !approvedSinceRequest(detail);
}

async function onSettleUnreachable(c: Call, detail: string): Promise<ClientReply> {
  const policy = policyFor(c.deps.config, c.effect);
  const local = c.deps.registry.inFlight(c.id.idempotencyKey);
  if (local) return join(c, local);
  const recent = c.deps.registry.recent(c.id.idempotencyKey);
  // Settle cannot vouch, so this process's own memory is the guard: never send what it knows landed or may have.
  if (recent && standingOfAnswer(recent.answer) !== "not_committed") {
    if (standingOfAnswer(recent.answer) === "committed") return answerCommitted(c, recent.invocationId);
    logCall(c, "denied:outcome_unknown(local)", recent.invocationId, null);
    return answer(gatewayAnswer("outcome_unknown", facts(c, recent.invocationId)));
  }
  const invocationId = `${c.id.taskId}:${c.id.idempotencyKey}:gw-${randomUUID().slice(0, 8)}`;
  if (policy.unreachable === "fail_open") return forwardUnguarded(c, invocationId, `fail_open (${detail})`, "spool");
  const r = ref(c, invocationId, 1);
  c.deps.settle.spool([
    attemptRecord(
      r,
      "intent",
      intentEnvelope(c.client.params, "fail_closed", { effect: c.effect, source: c.effectSource }),
      c.deps.now(),
    ),
    attemptRecord(r, "outcome", gatewayAnswer("settle_unreachable", facts(c, null)).structuredContent, c.deps.now()),
  ]);
  logCall(c, "fail_closed", invocationId, 1);
  return answer(gatewayAnswer("settle_unreachable", facts(c, null)));
}

/** Settle answered and said no: not "unreachable", so no fail-open. The key refused is said loudly (link.ts logs it). */
function onSettleRefused(c: Call, refusal: Refused): ClientReply {
  const detail = `HTTP ${refusal.status} ${refusal.code}`;
  logCall(c, `refused:settle_${refusal.status}`, null, null, "not_sent");
  const kind =
    refusal.blame === "key"
      ? "settle_refused_key"
      : refusal.blame === "setup"
        ? "settle_refused_setup"
        : "settle_refused";
  return answer(gatewayAnswer(kind, facts(c, null, { detail })));
}

async function runWrite(c: Call): Promise<ClientReply> {
  const { settle, config } = c.deps;
  const approved = new Set<string>();
  let named: string | undefined;
  let last: ClientReply | null = null;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    // A twin sent while Settle was unreachable is known here only: Settle's guard would let this one through.
    const unguarded = c.deps.registry.inFlight(c.id.idempotencyKey);
    if (unguarded?.unguarded) return join(c, unguarded);
    const spooled = c.deps.registry.recent(c.id.idempotencyKey);
    if (spooled?.unguarded && standingOfAnswer(spooled.answer) !== "not_committed") await settle.flush();
    const asked = Date.now();
    const guard = await settle.guard({
      task_id: c.id.taskId,
      ...(named ? { invocation_id: named } : {}),
      tool: c.client.params.name,
      idempotency_key: c.id.idempotencyKey,
      ...(c.effect === "unclassified" ? {} : { effect_class: c.effect }),
      at: c.deps.now().toISOString(),
      budget_left_s: Math.ceil(c.timeoutMs / 1000),
      args_digest: c.id.argsDigest,
      envelope: fitEnvelope(intentEnvelope(c.client.params, "forwarded", { effect: c.effect, source: c.effectSource })),
    });
    c.trail.settleMs += Date.now() - asked;
    if (isUnreachable(guard)) return onSettleUnreachable(c, guard.detail);
    if (isRefused(guard)) return onSettleRefused(c, guard);
    if (
      guard.allow &&
      spooled?.unguarded &&
      spooled.invocationId !== guard.invocation_id &&
      standingOfAnswer(spooled.answer) !== "not_committed"
    ) {
      // Settle has not seen the spooled twin yet (it could not be sent): this process's memory decides, and the intent just recorded is closed unsent.
      c.deps.settle.report([
        attemptRecord(
          ref(c, guard.invocation_id, guard.attempt),
          "outcome",
          outcomeEnvelope(c.client.params.name, {
            kind: "not_sent",
            detail: "an identical call sent while Settle was unreachable is not in Settle yet",
          }),
          c.deps.now(),
        ),
      ]);
      return onSettleUnreachable(c, "the spool has not reached Settle yet");
    }
    if (guard.allow) {
      if (!config.dry_run && (await needsApprovalNow(c, guard, approved))) {
        const next = await approve(c, guard.invocation_id, guard.attempt);
        if ("reply" in next) return next.reply;
        approved.add(next.retry);
        named = next.retry;
        continue;
      }
      return forward(c, guard.invocation_id, guard.attempt, round === 0 ? "forwarded" : "forwarded:after_decision");
    }
    if (config.dry_run)
      return forwardUnguarded(
        c,
        `${guard.invocation_id}:dry-${randomUUID().slice(0, 8)}`,
        `dry_run:would_deny:${guard.reason}`,
        "settle",
      );
    // Asked first even so, so that Settle counts the duplicate; then a twin in flight here gives this call its answer.
    const twin = guard.reason === "in_flight" ? c.deps.registry.inFlight(c.id.idempotencyKey) : null;
    if (twin?.invocationId === guard.invocation_id) return join(c, twin);
    if (
      guard.reason === "in_flight" &&
      c.deps.registry.recent(c.id.idempotencyKey)?.invocationId === guard.invocation_id &&
      round < MAX_ROUNDS - 1
    ) {
      // This process already has that call's answer; its outcome record is on its way to Settle. Ask again once it is there.
      await settle.flush();
      continue;
    }
    const next = await onDenied(c, guard);
    if ("reply" in next) {
      last = next.reply;
      return next.reply;
    }
    if (next.retry) approved.add(next.retry);
    named = next.retry || undefined;
  }
  return last ?? answer(gatewayAnswer("in_flight", facts(c, named ?? null)));
}

async function runRead(c: Call): Promise<ClientReply> {
  if (!c.deps.config.record_reads) {
    const got = await c.dispatch(c.client.params);
    logCall(c, "read", null, null, upstreamLabel(got));
    return replyFor(got, facts(c, null), c.client.cancelled.aborted);
  }
  // A read may always be repeated: never guarded, each one its own invocation.
  return forwardUnguarded(c, `${c.id.taskId}:${c.id.idempotencyKey}:${randomUUID().slice(0, 8)}`, "read", "settle");
}

export async function handleToolCall(deps: GatewayDeps, client: ClientCall, dispatch: Dispatch): Promise<ClientReply> {
  const started = Date.now();
  const tool = client.params.name;
  if (tool.length > TOOL_NAME_MAX) {
    // Before any pattern sees it: a name no tool can have is not worth a match.
    deps.log({
      tool: `${tool.slice(0, 64)}…`,
      invocation: null,
      attempt: null,
      effect: "unclassified",
      decision: "refused:tool_name_too_long",
      upstream: "not_sent",
      ms: Date.now() - started,
      guard_ms: 0,
    });
    const detail = `a tool name is at most ${TOOL_NAME_MAX} characters; this one has ${tool.length}`;
    return answer(
      gatewayAnswer("invalid_call", { tool: tool.slice(0, 64), invocationId: null, idempotencyKey: "", detail }),
    );
  }
  const rule = ruleFor(deps.config, tool);
  const { effect, source } = classifyEffect(
    deps.config,
    rule,
    deps.annotations(tool),
    deps.settleCatalog?.(tool) ?? null,
  );
  const taskId = resolveTask(deps.config.task, {
    meta: client.params._meta,
    headers: client.headers,
    sessionTask: client.sessionTask,
  });
  const id = identify(tool, client.params.arguments, taskId, rule);
  // The provider sees Settle's stable key, not the one the model minted for this try (idempotency_arg).
  const forwarded = rule?.idempotency_arg
    ? {
        ...client,
        params: { ...client.params, arguments: withKeyArg(client.params.arguments, rule, id.idempotencyKey) },
      }
    : client;
  const c: Call = {
    deps,
    client: forwarded as ClientCall,
    dispatch,
    rule,
    effect,
    effectSource: source,
    id,
    timeoutMs: (rule?.timeout_s ?? deps.config.call_timeout_s) * 1000,
    started,
    trail: { decisions: [], invocation: null, attempt: null, settleMs: 0 },
  };
  try {
    return await (effect === "read" ? runRead(c) : runWrite(c));
  } finally {
    writeLog(c);
  }
}
