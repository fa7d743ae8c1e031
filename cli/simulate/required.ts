import { checkInvocation, checkInvocations, intentsOf, outcomesOf, want } from "./checks";
import * as envelopes from "./envelopes";
import type { EnvelopeInput, Sent } from "./envelopes";
import { playEvidenceFailure, playInFlight, playLogLines, playStalled } from "./faults";
import {
  newScopedRetry,
  playDuplicateDelivery,
  playErrorBody200,
  playKillMidCall,
  playPartialBatch,
  playRateLimit,
  playSlowSuccess,
  RATE_LIMIT_RETRY_AFTER_S,
  SLOW_BUDGET_S,
} from "./fixtures";
import {
  playApproval,
  playInputError,
  playOk,
  playPermanent,
  playRefusal,
  playRetryThenOk,
  playUnknownStays,
} from "./outcomes";
import { newInvocation, newTask, type Inv, type SimContext, type SimRecord, type TaskLog } from "./recorder";

// The tasks every run plays first, each with the checks that prove Settle
// read it right: source article 002 (docs/outcome-model.md)'s six fixtures and attempt log, source article 004 (docs/outcome-model.md)'s evidence
// failure, stalled and in-flight intents, and a tour of every dialect.

type Variant = (input: EnvelopeInput) => Sent;
type Play = (ctx: SimContext, inv: Inv, variant?: Variant) => boolean;
export type RequiredTask = { title: string; play: (ctx: SimContext, number: number, start: number) => void };

const seconds = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;

/** Plays one invocation with a given envelope and checks the dialect Settle detected and the status it derived. */
function tourStep(ctx: SimContext, task: TaskLog, toolName: string, play: Play, variant: Variant): void {
  const inv = newInvocation(ctx, task, toolName, "dialect tour");
  let shown: Sent | null = null;
  play(ctx, inv, (input) => (shown = variant(input)));
  const sent = shown as Sent | null;
  if (!sent) throw new Error(`tour step ${toolName} sent no envelope`);
  const status = inv.planned.expected.status;
  checkInvocation(
    ctx,
    `dialect ${sent.variant} (${inv.tool.name}, ${inv.tool.effect}) → ${status}`,
    inv,
    (view, problems) => {
      want(problems, "status", view.status, status);
      const read = outcomesOf(view).some((a) => a.dialect === sent.dialect && a.wrapper_dialect === sent.wrapper);
      if (!read)
        problems.push(
          `no outcome was read as ${sent.dialect}${sent.wrapper ? ` in ${sent.wrapper}` : ""} (got ${outcomesOf(view)
            .map((a) => `${a.dialect}/${a.wrapper_dialect}`)
            .join(", ")})`,
        );
    },
  );
}

function malformedRecord(task: TaskLog): SimRecord {
  // A runtime bug: the record lost its task_id. Settle must reject it and store nothing.
  return {
    event_id: `sim-${task.taskId}:malformed`,
    tool: "send_email",
    phase: "outcome",
    at: new Date(task.clock).toISOString(),
    idempotency_key: "lost-task",
    envelope: { outcome: "ok", effect_applied: "yes" },
  };
}

export const MALFORMED = "malformed";

export const requiredTasks: RequiredTask[] = [
  {
    title: "source article 002 (docs/outcome-model.md) fixture 1: kill mid-call",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "ord", "agent:checkout", n, start);
      playOk(ctx, newInvocation(ctx, task, "get_price", "read"), envelopes.readSuccess.openaiText);
      const inv = newInvocation(ctx, task, "create_order", "kill mid-call");
      playKillMidCall(ctx, inv);
      checkInvocation(
        ctx,
        "source article 002 (docs/outcome-model.md) fixture 1, kill mid-call: unknown, probe found → reconciled (committed), one effect",
        inv,
        (view, p) => {
          want(p, "status", view.status, "reconciled");
          want(p, "commit_state", view.commit_state, "committed");
          want(p, "resolution.by", view.resolution?.by, "probe");
          want(p, "first outcome's commit_state", outcomesOf(view)[0]?.commit_state, "unknown");
          want(p, "attempt_count", view.attempt_count, 1);
          want(p, "dispatches", ctx.world.dispatches(inv.key), 1);
          want(p, "business effects", ctx.world.effects(inv.key), 1);
        },
      );
    },
  },
  {
    title: "source article 002 (docs/outcome-model.md) fixture 2: duplicate delivery",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "ntf", "agent:notify", n, start);
      const inv = newInvocation(ctx, task, "send_email", "duplicate delivery", { explicitId: false });
      playDuplicateDelivery(ctx, inv);
      checkInvocation(
        ctx,
        "source article 002 (docs/outcome-model.md) fixture 2, duplicate delivery: one key sent twice → one invocation, two ok returns, one effect",
        inv,
        (view, p) => {
          want(p, "status", view.status, "succeeded");
          want(p, "invocation_id (derived from the key)", view.invocation_id, `${task.taskId}:${inv.key}`);
          want(p, "attempt_count", view.attempt_count, 2);
          want(p, "committed outcomes", outcomesOf(view).filter((a) => a.commit_state === "committed").length, 2);
          want(p, "deliveries", ctx.world.dispatches(inv.key), 2);
          want(p, "business effects", ctx.world.effects(inv.key), 1);
        },
      );
    },
  },
  {
    title: "source article 002 (docs/outcome-model.md) fixture 3: 200 with an error body",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "inv", "agent:billing", n, start);
      const inv = newInvocation(ctx, task, "create_invoice", "200 with an error body");
      playErrorBody200(ctx, inv);
      checkInvocation(
        ctx,
        "source article 002 (docs/outcome-model.md) fixture 3, 200 with an error body: an error, never ok on status alone → needs_input",
        inv,
        (view, p) => {
          want(p, "status", view.status, "needs_input");
          want(p, "commit_state", view.commit_state, "not_committed");
          want(p, "dialect", outcomesOf(view)[0]?.dialect, "seed001");
          want(p, "wrapper_dialect", outcomesOf(view)[0]?.wrapper_dialect, "mcp");
        },
      );
    },
  },
  {
    title: "source article 002 (docs/outcome-model.md) fixture 4: slow success",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "bk", "agent:concierge", n, start);
      const inv = newInvocation(ctx, task, "create_booking", "slow success");
      playSlowSuccess(ctx, inv);
      checkInvocation(
        ctx,
        `source article 002 (docs/outcome-model.md) fixture 4, slow success: lands at 29 s of a ${SLOW_BUDGET_S} s budget → succeeded, no orphaned retry`,
        inv,
        (view, p) => {
          want(p, "status", view.status, "succeeded");
          want(p, "attempt_count", view.attempt_count, 1);
          const [intent] = intentsOf(view);
          const [outcome] = outcomesOf(view);
          if (intent && outcome) want(p, "seconds from intent to outcome", seconds(intent.at, outcome.at), 29);
        },
      );
    },
  },
  {
    title: "source article 002 (docs/outcome-model.md) fixture 5: partial batch",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "rpt", "agent:ops", n, start);
      const inv = newInvocation(ctx, task, "update_sheet_range", "partial batch");
      const retry = newScopedRetry(ctx, inv);
      playPartialBatch(ctx, inv, retry);
      checkInvocations(
        ctx,
        "source article 002 (docs/outcome-model.md) fixture 5, partial batch: per-item results → partially_applied, retry scoped to the row not applied",
        [inv, retry],
        ([view, retried], p) => {
          want(p, "status", view!.status, "partially_applied");
          want(p, "commit_state", view!.commit_state, "partial");
          const items = outcomesOf(view!)[0]?.items ?? [];
          want(p, "items not applied", items.filter((i) => i.applied === "no").length, 1);
          want(p, "items unknown", items.filter((i) => i.applied === "unknown").length, 1);
          want(p, "scoped retry status", retried!.status, "succeeded");
          const redone = (outcomesOf(retried!)[0]?.items ?? []).map((i) => i.item_id).join(",");
          want(
            p,
            "rows retried",
            redone,
            items
              .filter((i) => i.applied === "no")
              .map((i) => i.item_id)
              .join(","),
          );
        },
      );
    },
  },
  {
    title: "source article 002 (docs/outcome-model.md) fixture 6: rate limit with Retry-After",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "sms", "agent:notify", n, start);
      const inv = newInvocation(ctx, task, "send_sms", "rate limit");
      playRateLimit(ctx, inv);
      checkInvocation(
        ctx,
        `source article 002 (docs/outcome-model.md) fixture 6, rate limit: 429 with retry_after ${RATE_LIMIT_RETRY_AFTER_S} → retried only after not_before → succeeded`,
        inv,
        (view, p) => {
          want(p, "status", view.status, "succeeded");
          want(p, "attempt_count", view.attempt_count, 2);
          const limited = outcomesOf(view).find((a) => a.attempt === 1);
          const notBefore = limited?.retry.not_before;
          if (!limited || !notBefore) return void p.push("attempt 1 has no retry.not_before");
          want(p, "retry_after (s)", seconds(limited.at, notBefore), RATE_LIMIT_RETRY_AFTER_S);
          const second = intentsOf(view).find((a) => a.attempt === 2);
          if (!second || Date.parse(second.at) < Date.parse(notBefore))
            p.push(`attempt 2 started at ${second?.at ?? "never"}, before not_before ${notBefore}`);
        },
      );
    },
  },
  {
    title: "source article 002 (docs/outcome-model.md) attempt log lines",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "ord", "agent:checkout", n, start);
      const inv = playLogLines(ctx, task, "create_order", ctx.now);
      checkInvocation(
        ctx,
        'source article 002 (docs/outcome-model.md) attempt log lines accepted as records: probe "found" → reconciled (committed)',
        inv,
        (view, p) => {
          want(p, "status", view.status, "reconciled");
          want(p, "commit_state", view.commit_state, "committed");
          want(p, "resolution.by", view.resolution?.by, "probe");
          want(p, "attempt_count", view.attempt_count, 2);
        },
      );
    },
  },
  {
    title: "source article 004 (docs/outcome-model.md): post-dispatch evidence failure",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "rfd", "agent:support", n, start);
      playOk(ctx, newInvocation(ctx, task, "get_order_status", "read"), envelopes.success.seed002);
      const inv = newInvocation(ctx, task, "create_refund", "evidence failure", { explicitId: true });
      playEvidenceFailure(ctx, inv);
      checkInvocation(
        ctx,
        "source article 004 (docs/outcome-model.md) fault test: effect happened, evidence write failed → outcome_unknown (evidence_failed), never retried, one effect",
        inv,
        (view, p) => {
          want(p, "status", view.status, "outcome_unknown");
          want(p, "next_action", view.next_action, "verify_operation");
          const outcome = outcomesOf(view)[0];
          want(p, "dispatch_stage", outcome?.dispatch_stage, "evidence_failed");
          want(p, "retry.directive", outcome?.retry.directive, "never");
          want(p, "attempt_count", view.attempt_count, 1);
          want(p, "dispatches", ctx.world.dispatches(inv.key), 1);
          want(p, "business effects", ctx.world.effects(inv.key), 1);
        },
      );
    },
  },
  {
    title: "stalled intent",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "gdpr", "agent:privacy", n, start);
      playOk(ctx, newInvocation(ctx, task, "get_order_status", "read"), envelopes.success.anthropic);
      const inv = newInvocation(ctx, task, "delete_record", "stalled");
      playStalled(ctx, inv);
      checkInvocation(
        ctx,
        "stalled intent: intent with a small budget and no outcome → stalled, verify first",
        inv,
        (view, p) => {
          want(p, "status", view.status, "stalled");
          want(p, "next_action", view.next_action, "verify_operation");
        },
      );
    },
  },
  {
    title: "in-flight intent",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "acc", "agent:privacy", n, start);
      const inv = newInvocation(ctx, task, "revoke_access", "in flight");
      playInFlight(ctx, inv, ctx.now);
      checkInvocation(ctx, "in-flight intent: within its budget → pending, not in the queue", inv, (view, p) =>
        want(p, "status", view.status, "pending"),
      );
    },
  },
  {
    title: "dialect tour: billing",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "inv", "agent:billing", n, start);
      tourStep(ctx, task, "create_invoice", playOk, envelopes.success.settle);
      tourStep(ctx, task, "send_email", playInputError, envelopes.inputError.seed001);
      tourStep(ctx, task, "charge_card", playApproval, envelopes.approval.settle);
      tourStep(ctx, task, "transfer_funds", playRefusal, envelopes.refusal.rfc9457);
      tourStep(ctx, task, "update_crm_contact", playOk, envelopes.success.mcpStructured);
    },
  },
  {
    title: "dialect tour: failures without evidence",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "tkt", "agent:support", n, start);
      tourStep(ctx, task, "create_ticket", playUnknownStays, envelopes.unknown.mcpJson);
      tourStep(ctx, task, "update_crm_contact", playUnknownStays, envelopes.unknown.mcpErrorText);
      tourStep(ctx, task, "post_webhook", playUnknownStays, envelopes.unknown.unrecognized);
      tourStep(ctx, task, "delete_record", playUnknownStays, envelopes.unknown.seed003);
      tourStep(ctx, task, "send_slack_message", playUnknownStays, envelopes.unknown.anthropic);
      tourStep(ctx, task, "create_booking", playUnknownStays, envelopes.unknown.seed001);
    },
  },
  {
    title: "dialect tour: checkout",
    play: (ctx, n, start) => {
      const task = newTask(ctx, "ord", "agent:checkout", n, start);
      tourStep(
        ctx,
        task,
        "get_price",
        (c, i, v) => playRetryThenOk(c, i, v, envelopes.readSuccess.openaiText),
        envelopes.readFailure.rfc9457,
      );
      tourStep(ctx, task, "create_order", playOk, envelopes.success.openaiJson);
      tourStep(ctx, task, "cancel_booking", playOk, envelopes.success.anthropic);
      tourStep(ctx, task, "create_refund", playPermanent, envelopes.permanent.anthropicSeed003);
      tourStep(ctx, task, "send_sms", playInputError, envelopes.inputError.rfc9457);
      tourStep(ctx, task, "charge_card", playOk, envelopes.success.seed004);
      tourStep(ctx, task, "send_email", playOk, envelopes.success.mcpText);
      task.records.push(malformedRecord(task));
    },
  },
];

const allDialects = [
  "settle",
  "seed001",
  "seed002",
  "seed003",
  "seed004",
  "rfc9457",
  "mcp",
  "anthropic",
  "openai",
  "unrecognized",
];

/** Every dialect of docs/outcome-model.md §3, across everything the required tasks sent. */
export function checkEveryDialect(ctx: SimContext): void {
  const invs = ctx.invocations.map((p) => ({ id: p.invocationId }));
  checkInvocations(
    ctx,
    `every dialect of docs/outcome-model.md §3 was detected (${allDialects.length})`,
    invs,
    (views, p) => {
      const seen = new Set(views.flatMap((v) => v.attempts.flatMap((a) => [a.dialect, a.wrapper_dialect])));
      const missing = allDialects.filter((d) => !seen.has(d as never));
      if (missing.length > 0) p.push(`never detected: ${missing.join(", ")}`);
    },
  );
}
