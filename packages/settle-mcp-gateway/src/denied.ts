import { randomUUID } from "node:crypto";
import { decisionFields, type GuardAnswer } from "@settle/client";
import { gatewayAnswer, isCallToolResult, replayAnswer, type CallToolResult } from "./answers.js";
import { approvedSinceRequest, holdForApproval } from "./approval.js";
import { answer, facts, logCall, ref, upstreamLabel, type Call } from "./call.js";
import { policyFor } from "./config.js";
import { replyFor, type ClientReply } from "./forward.js";
import { probeEnvelope, runProbe } from "./probe.js";
import { approvalRequestEnvelope, attemptRecord } from "./records.js";
import { standingOfAnswer } from "./registry.js";
import { isUnreachable } from "./settle-link.js";

// When Settle's guard says no, or a twin is already on its way, the gateway follows it through where it can
// settle it itself: a twin in flight here is joined, a committed call's stored result replayed, an unknown outcome
// probed when a probe is configured, an approval waited for; otherwise the client is told why, in words.

/** A twin of this call is in flight in this process: its answer is this call's answer. */
export async function join(
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

export async function answerCommitted(c: Call, invocationId: string, detail?: string): Promise<ClientReply> {
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

/** `approved`: a person approved these arguments in place of the call's own; the call goes on with them. */
export type Next = { reply: ClientReply } | { retry: string; approved?: Record<string, unknown> | null };

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

export async function onDenied(c: Call, denied: GuardAnswer): Promise<Next> {
  const { settle, config } = c.deps;
  const inv = denied.invocation_id;
  if (denied.reason === "already_committed") return { reply: await answerCommitted(c, inv) };
  const decision = await settle.getDecision(inv);
  const known = isUnreachable(decision) ? null : decision;
  if (known && (known.decision === "retry_allowed" || known.decision === "proceed"))
    return { retry: inv, approved: decisionFields(known).arguments ?? null };
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
export async function approve(c: Call, invocationId: string, attempt?: number): Promise<Next> {
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
  if (held.kind === "proceed") return { retry: invocationId, approved: held.arguments };
  if (held.kind === "rejected" || held.kind === "escalated") {
    // A person's reply, when they gave one, is what the client reads as the tool's result.
    logCall(c, held.kind, invocationId, null);
    const said = { decidedBy: held.decidedBy, reply: held.reply };
    return { reply: answer(gatewayAnswer(held.kind, facts(c, invocationId, said))) };
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

export async function needsApprovalNow(c: Call, allowed: GuardAnswer, approved: Set<string>): Promise<boolean> {
  const policy = policyFor(c.deps.config, c.effect);
  if (!(c.rule?.approval ?? policy.approval)) return false;
  if (approved.has(allowed.invocation_id)) return false;
  if (allowed.attempt <= 1) return true;
  const detail = await c.deps.settle.getInvocation(allowed.invocation_id);
  return isUnreachable(detail) || !approvedSinceRequest(detail);
}
