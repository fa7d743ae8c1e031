import { randomUUID } from "node:crypto";
import { decisionFields } from "@settle/client";
import { gatewayAnswer } from "./answers.js";
import { policyFor } from "./config.js";
import { classifyEffect, ruleFor } from "./effects.js";
import { fitEnvelope } from "./fit.js";
import { forwardAttempt, replyFor, type ClientReply, type Dispatch } from "./forward.js";
import { approvedIdentity, identify, resolveTask, withKeyArg } from "./identity.js";
import { intentEnvelope, outcomeEnvelope } from "./outcomes.js";
import { attemptRecord } from "./records.js";
import { standingOfAnswer } from "./registry.js";
import { isRefused, isUnreachable, type Refused } from "./settle-link.js";
import {
  answer,
  facts,
  logCall,
  ref,
  upstreamLabel,
  writeLog,
  type Call,
  type ClientCall,
  type GatewayDeps,
} from "./call.js";
import { answerCommitted, join, needsApprovalNow, onDenied, approve } from "./denied.js";

// Every tools/call, whatever the transport: identities, effect class, the
// guard first (the intent is written before dispatch), then forward and
// report — or answer the client without calling the server, because an
// identical call already took effect, may have, is in flight, waits for a
// person, or was told to wait. Denials are followed through where the
// gateway can settle them itself: a twin in flight here is joined, an
// unknown outcome is probed when a probe is configured, an approval is
// waited for, and an invocation Settle says may go again is guarded again.

export type { CallLog, ClientCall, GatewayDeps } from "./call.js";

const MAX_ROUNDS = 4;
/** Settle's limit on a tool's name: a longer one could not be recorded, so it is refused before anything reads it. */
export const TOOL_NAME_MAX = 200;

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

/**
 * Approved with edits: from here the call is the one the person approved. The server gets the approved arguments
 * (with the gateway's own `idempotency_arg`), and Settle's records carry them, so nothing is flagged.
 */
function takeApproved(c: Call, approved: Record<string, unknown> | null | undefined): void {
  if (!approved) return;
  c.id = approvedIdentity(c.id, approved, c.rule);
  const args = withKeyArg(approved, c.rule, c.id.idempotencyKey) as Record<string, unknown>;
  c.client = { ...c.client, params: { ...c.client.params, arguments: args } };
}

/** A call that needs approval may have been approved with edits since the gateway answered "awaiting approval". */
async function approvedSinceAnswered(c: Call): Promise<void> {
  const policy = policyFor(c.deps.config, c.effect);
  if (c.deps.config.dry_run || !(c.rule?.approval ?? policy.approval)) return;
  // Settle names an invocation `task:key` (a longer one by its hash: not looked up; Settle then flags the run).
  const known = await c.deps.settle.findDecision(`${c.id.taskId}:${c.id.idempotencyKey}`);
  if (known?.decision === "proceed") takeApproved(c, decisionFields(known).arguments);
}

async function runWrite(c: Call): Promise<ClientReply> {
  const { settle, config } = c.deps;
  const approved = new Set<string>();
  let named: string | undefined;
  let last: ClientReply | null = null;
  await approvedSinceAnswered(c);
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
      ...(c.id.arguments ? { arguments: c.id.arguments } : { args_digest: c.id.argsDigest }),
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
        takeApproved(c, next.approved);
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
    takeApproved(c, next.approved);
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
