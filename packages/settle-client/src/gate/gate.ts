import { createSettleClient, type SettleClient } from "../client.js";
import type { CallResult } from "../classify.js";
import { SettleError } from "../errors.js";
import type { Decision, EffectClass, GuardAnswer, InvocationDetail, SettleRecord } from "../types.js";
import { approvalRequestEnvelope, approvedSinceRequest, decisionFields } from "./decision.js";
import { defaultIdempotencyKey, effectFromCatalog, isPlainObject, type CatalogEntry } from "./identity.js";
import { answerFor, type Answer, type AnswerFacts } from "./sentences.js";
import { probeBlocking, type Probe } from "./probe.js";
import { classifyCall, saysUnknown } from "./signals.js";

// One framework tool call under Settle, whatever the framework: the
// adapters (@settle/ai-sdk, @settle/langchain, @settle/openai-agents,
// @settle/claude-code) are this gate plus the framework's shapes. It asks the
// guard (which writes the intent ahead), calls the tool, reports the outcome
// in a dialect Settle reads, and — when Settle refuses, or the outcome is
// unknown — answers with one plain sentence instead of throwing, so no retry
// layer above re-runs a write that may have landed (docs/outcome-model.md §5).

export type GateContext = { toolCallId?: string } & Record<string, unknown>;

export type GateOptions<C extends GateContext = GateContext> = {
  /** Settle's address and a runtime key, or a client made with createSettleClient. */
  settle: { url: string; key: string } | SettleClient;
  /** The durable goal the calls belong to (docs/outcome-model.md §1): one string, or one per call. */
  taskId: string | ((ctx: C) => string);
  /** Effect classes by tool name; a tool not named takes its class from the runtime's tool catalog in Settle. */
  effects?: Record<string, EffectClass>;
  /** Default: the tool and a digest of its canonical arguments. Never the tool-call id: a retry would get a new key. */
  idempotencyKey?: (tool: string, args: unknown, ctx: C) => string | Promise<string>;
  /** Which calls a person approves in Settle first: effect classes (`"unclassified"` for a tool no catalog names), or a test. Default none. */
  approvals?: ReadonlyArray<EffectClass | "unclassified"> | ((tool: string, effect: EffectClass | null) => boolean);
  /** How long a call that needs approval waits for the decision before it answers "awaits approval". Default 0. */
  approvalWaitMs?: number;
  /** A call's budget: past it the outcome is unknown (the call may still land) and its signal aborts. */
  timeoutMs?: number;
  /** Turn what the call did into an envelope in any dialect Settle reads. Default: see signals.ts. */
  classify?: (
    result: CallResult<unknown>,
    context: { tool: string; effectClass: EffectClass | null; attemptId: string },
  ) => unknown;
  /** When Settle cannot be reached: run the call anyway (reported later if possible) or answer that it was not run. Default: run reads, creates and sends; refuse money, destructive and unclassified writes. */
  whenUnreachable?: (tool: string, effect: EffectClass | null) => "run" | "refuse";
  /** Looks a call's effect up (by its arguments or key) when an identical call's outcome is unknown: found settles it, absent lets it run again. */
  probe?: Probe;
  /** How long the tool catalog read from Settle is used before it is read again. Default 30 s. */
  catalogTtlMs?: number;
};

export type GateCall<C extends GateContext = GateContext> = { tool: string; args: unknown; ctx: C };
export type CallInfo = { idempotencyKey: string; invocationId: string | null; attempt: number; signal: AbortSignal };

export type GateResult<R> =
  /** The tool ran and returned: its own value, which the framework hands to the model as usual. */
  | { kind: "ran"; value: R; invocationId: string | null }
  /** Settle answered instead of the tool (or the outcome is unknown): give `answer.text` to the model. */
  | { kind: "answered"; answer: Answer; invocationId: string | null }
  /** The tool threw and nothing landed (a read, or what Settle read as not committed): the framework may handle it as usual. */
  | { kind: "threw"; error: unknown; invocationId: string | null };

/** The guard's allowance after a person's approval, with the arguments they approved when they edited them. */
export type HeldAnswer = GuardAnswer & { approvedArguments?: Record<string, unknown> };

export type Identity = { taskId: string; idempotencyKey: string; effect: EffectClass | null };

export type Gate<C extends GateContext = GateContext> = {
  client: SettleClient;
  identify: (call: GateCall<C>) => Promise<Identity>;
  needsApproval: (tool: string, effect: EffectClass | null) => boolean;
  run: <R>(
    call: GateCall<C>,
    execute: (args: unknown, info: CallInfo) => Promise<R>,
    readAs?: (value: R) => unknown,
  ) => Promise<GateResult<R>>;
  /** The answer Settle gives for an invocation that blocks a call (the guard's denial, or a rejection). */
  answerFor: (tool: string, id: Identity, blocking: string, reason: GuardAnswer["reason"]) => Promise<Answer>;
  /** Asks the guard (the intent is written ahead): its answer, Settle's refusal as an Answer, or null when Settle cannot be reached. */
  ask: (call: GateCall<C>, id: Identity, invocationId?: string) => Promise<GuardAnswer | Answer | null>;
  /** Reports an attempt's outcome (for adapters whose call and result arrive apart, such as hooks). */
  reportOutcome: (
    call: GateCall<C>,
    id: Identity,
    invocationId: string,
    attempt: number,
    envelope: unknown,
    suffix?: string,
  ) => Promise<void>;
  /**
   * For a write that needs approval and was allowed: runs only once a person approved it after its latest request.
   * `approvedArguments`: a person approved other arguments than the call's; run the tool with these.
   */
  approvalHold: (call: GateCall<C>, id: Identity, allowed: GuardAnswer) => Promise<HeldAnswer | Answer>;
  whenUnreachable: (tool: string, effect: EffectClass | null) => "run" | "refuse";
  /**
   * For a call that needs approval: the arguments a person approved for it (with edits) since it was held, or null.
   * Ask the guard with these and run the tool with them, so the intent Settle records matches the approval.
   */
  approvedArguments: (call: GateCall<C>, id: Identity) => Promise<Record<string, unknown> | null>;
};

const isClient = (s: GateOptions["settle"]): s is SettleClient =>
  typeof (s as Partial<SettleClient>).guard === "function";
const unreachable = (e: unknown) => e instanceof SettleError && (e.status === 0 || e.status >= 500);
const defaultWhenUnreachable = (_tool: string, effect: EffectClass | null) =>
  effect === null || effect === "money" || effect === "destructive" ? "refuse" : "run";

export function createGate<C extends GateContext = GateContext>(options: GateOptions<C>): Gate<C> {
  const client = isClient(options.settle) ? options.settle : createSettleClient(options.settle);
  const whenUnreachable = options.whenUnreachable ?? defaultWhenUnreachable;
  let catalog: { entries: CatalogEntry[]; until: number } | null = null;

  async function catalogEffect(tool: string): Promise<EffectClass | null> {
    if (!catalog || catalog.until < Date.now()) {
      try {
        const read = await client.getToolCatalog();
        catalog = { entries: read.items, until: Date.now() + (options.catalogTtlMs ?? 30_000) };
      } catch {
        // Unread, a tool is unclassified: a write, as Settle treats it (docs/outcome-model.md §2).
        return catalog ? effectFromCatalog(catalog.entries, tool) : null;
      }
    }
    return effectFromCatalog(catalog.entries, tool);
  }

  async function identify(call: GateCall<C>): Promise<Identity> {
    const taskId = typeof options.taskId === "function" ? options.taskId(call.ctx) : options.taskId;
    const idempotencyKey = options.idempotencyKey
      ? await options.idempotencyKey(call.tool, call.args, call.ctx)
      : await defaultIdempotencyKey(call.tool, call.args);
    const effect = options.effects?.[call.tool] ?? (await catalogEffect(call.tool));
    return { taskId, idempotencyKey, effect };
  }

  function needsApproval(tool: string, effect: EffectClass | null): boolean {
    const rule = options.approvals;
    if (!rule) return false;
    return typeof rule === "function" ? rule(tool, effect) : rule.includes(effect ?? "unclassified");
  }

  async function answerForBlocking(
    tool: string,
    id: Identity,
    blocking: string,
    reason: GuardAnswer["reason"],
  ): Promise<Answer> {
    let detail: InvocationDetail | null = null;
    try {
      detail = await client.getInvocation(blocking);
    } catch {
      // The refusal stands without its details.
    }
    const first = detail?.attempts.map((a) => Date.parse(a.at)).filter(Number.isFinite);
    const facts: AnswerFacts = {
      tool,
      invocationId: blocking,
      idempotencyKey: id.idempotencyKey,
      ageS: first && first.length > 0 ? (Date.now() - Math.min(...first)) / 1000 : null,
      duplicate: reason === "possible_duplicate",
      notBefore: (detail?.not_before as string | null | undefined) ?? null,
    };
    const status = detail?.status;
    if (reason === "already_committed" || detail?.commit_state === "committed")
      return answerFor("already_committed", facts);
    if (status === "partially_applied") return answerFor("partially_applied", facts);
    if (status === "awaiting_approval") return answerFor("awaiting_approval", facts);
    if (status === "retry_scheduled") return answerFor("retry_later", facts);
    if (status === "rejected" || (status === "escalated" && detail?.commit_state !== "unknown")) {
      const decision = await client.getDecision(blocking).catch(() => null);
      const { reply } = decisionFields(decision);
      return answerFor(status === "rejected" ? "rejected" : "escalated", {
        ...facts,
        decidedBy: decision?.decided_by ?? null,
        reply,
      });
    }
    if (reason === "in_flight" || status === "pending" || status === "approved") return answerFor("in_flight", facts);
    return answerFor("outcome_unknown", facts);
  }

  /** Reports what one attempt did; Settle unreachable now leaves the call's result as it is (the record is lost, said in the docs). */
  async function reportOutcome(base: SettleRecord, envelope: unknown, suffix = ""): Promise<void> {
    try {
      await client.report({ ...base, event_id: `${base.event_id}${suffix}`, phase: "outcome", envelope });
    } catch {
      // Nothing to do here that would not hide the tool's own result from the model.
    }
  }

  async function callWithBudget<R>(execute: () => (signal: AbortSignal) => Promise<R>): Promise<CallResult<R>> {
    const controller = new AbortController();
    const running = Promise.resolve()
      .then(() => execute()(controller.signal))
      .then(
        (value): CallResult<R> => ({ kind: "returned", value }),
        (error: unknown): CallResult<R> => ({ kind: "threw", error }),
      );
    const afterMs = options.timeoutMs;
    if (!afterMs) return running;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<CallResult<R>>((resolve) => {
      timer = setTimeout(() => resolve({ kind: "timed_out", afterMs }), afterMs);
    });
    const result = await Promise.race([running, timedOut]);
    clearTimeout(timer);
    if (result.kind === "timed_out") controller.abort(new Error(`budget of ${afterMs} ms spent`));
    return result;
  }

  /** Asks the guard; `null` when Settle cannot be reached. */
  async function askOnce(call: GateCall<C>, id: Identity, invocationId?: string): Promise<GuardAnswer | Answer | null> {
    try {
      return await client.guard({
        task_id: id.taskId,
        ...(invocationId ? { invocation_id: invocationId } : {}),
        tool: call.tool,
        idempotency_key: id.idempotencyKey,
        ...(id.effect ? { effect_class: id.effect } : {}),
        at: new Date().toISOString(),
        ...(options.timeoutMs ? { budget_left_s: Math.ceil(options.timeoutMs / 1000) } : {}),
        ...(isPlainObject(call.args) && Object.keys(call.args).length > 0 ? { arguments: call.args } : {}),
      } as Parameters<SettleClient["guard"]>[0]);
    } catch (error) {
      if (unreachable(error)) return null;
      const detail =
        error instanceof SettleError
          ? `${error.code}: ${error.envelope?.agent_message ?? error.message}`
          : String(error);
      return answerFor("settle_refused", {
        tool: call.tool,
        invocationId,
        idempotencyKey: id.idempotencyKey,
        detail,
      } as AnswerFacts);
    }
  }

  /** Asks the guard; an identical call's unknown outcome is first probed (the `probe` option), and asked again when absent. */
  async function ask(call: GateCall<C>, id: Identity, invocationId?: string): Promise<GuardAnswer | Answer | null> {
    const asked = await askOnce(call, id, invocationId);
    if (asked === null || "text" in asked || asked.allow || asked.reason !== "outcome_unknown" || !options.probe)
      return asked;
    const found = await probeBlocking(client, options.probe, { ...call, ...id }, asked);
    return found === "absent" ? askOnce(call, id, asked.invocation_id) : asked;
  }

  /** An allowed write that needs approval: runs only once a person approved it after its latest request. */
  async function approvalHold(call: GateCall<C>, id: Identity, allowed: GuardAnswer): Promise<HeldAnswer | Answer> {
    const inv = allowed.invocation_id;
    const detail = allowed.attempt > 1 ? await client.getInvocation(inv).catch(() => null) : null;
    if (detail && approvedSinceRequest(detail)) {
      const edited = await approvedEdit(inv);
      return edited ? { ...allowed, approvedArguments: edited } : allowed;
    }
    const base = recordOf(call, id, inv, allowed.attempt);
    await reportOutcome(base, approvalRequestEnvelope(call.tool), ":approval");
    const facts = { tool: call.tool, invocationId: inv, idempotencyKey: id.idempotencyKey };
    if (!options.approvalWaitMs) return answerFor("awaiting_approval", facts);
    const decided = await client
      .awaitDecision(inv, {
        timeout: options.approvalWaitMs,
        until: (d) => d.decision !== "wait" || d.status === "escalated",
      })
      .catch(() => null);
    const { arguments: edited, reply } = decisionFields(decided);
    if (decided?.decision === "proceed") {
      // Approved with edits: the guard records the intent with the approved arguments, so nothing is flagged.
      const again = await ask(edited ? { ...call, args: edited } : call, id, inv);
      if (again === null) return answerFor("settle_unreachable", facts);
      return edited && !("text" in again) ? { ...again, approvedArguments: edited } : again;
    }
    if (decided?.decision === "abandon")
      return answerFor("rejected", { ...facts, decidedBy: decided.decided_by, reply });
    if (decided?.status === "escalated")
      return answerFor("escalated", { ...facts, decidedBy: decided.decided_by, reply });
    return answerFor("awaiting_approval", facts);
  }

  /** The arguments a person approved in place of the call's own, when the invocation's decision is to proceed with them. */
  async function approvedEdit(invocationId: string): Promise<Record<string, unknown> | null> {
    const decision = await client.getDecision(invocationId).catch(() => null);
    return decision?.decision === "proceed" ? (decisionFields(decision).arguments ?? null) : null;
  }

  /** A call a person approved with edits between two of the framework's steps (named `task:key`, as Settle names it). */
  async function approvedArguments(call: GateCall<C>, id: Identity): Promise<Record<string, unknown> | null> {
    if (id.effect === "read" || !needsApproval(call.tool, id.effect)) return null;
    return approvedEdit(`${id.taskId}:${id.idempotencyKey}`);
  }

  const recordOf = (call: GateCall<C>, id: Identity, inv: string, attempt: number): SettleRecord => ({
    event_id: `${inv}:a${attempt}:outcome`,
    task_id: id.taskId,
    invocation_id: inv,
    attempt,
    attempt_id: `${inv}:a${attempt}`,
    tool: call.tool,
    at: new Date().toISOString(),
    idempotency_key: id.idempotencyKey,
    ...(id.effect ? { effect_class: id.effect } : {}),
  });

  async function run<R>(
    call: GateCall<C>,
    execute: (args: unknown, info: CallInfo) => Promise<R>,
    readAs?: (value: R) => unknown,
  ): Promise<GateResult<R>> {
    const id = await identify(call);
    const plain = (signal: AbortSignal, info: Partial<CallInfo> = {}) =>
      execute(call.args, { idempotencyKey: id.idempotencyKey, invocationId: null, attempt: 0, signal, ...info });
    if (id.effect === "read") {
      // A read may always be repeated: never guarded, never recorded.
      const result = await callWithBudget(() => (signal) => plain(signal));
      return result.kind === "returned"
        ? { kind: "ran", value: result.value, invocationId: null }
        : {
            kind: "threw",
            error: result.kind === "threw" ? result.error : new Error(`no answer within ${options.timeoutMs} ms`),
            invocationId: null,
          };
    }
    // A call a person approved with edits (between two of the framework's steps) asks the guard with the approved
    // arguments, so the intent it records matches the approval (the invocation is named `task:key`, as Settle does).
    const approvedBefore = await approvedArguments(call, id);
    let asked: HeldAnswer | Answer | null = await ask(approvedBefore ? { ...call, args: approvedBefore } : call, id);
    const facts = { tool: call.tool, invocationId: null, idempotencyKey: id.idempotencyKey };
    if (asked === null) {
      if (whenUnreachable(call.tool, id.effect) === "refuse")
        return { kind: "answered", answer: answerFor("settle_unreachable", facts), invocationId: null };
      const result = await callWithBudget(() => (signal) => plain(signal));
      if (result.kind === "returned") return { kind: "ran", value: result.value, invocationId: null };
      const message = result.kind === "threw" ? String(result.error) : `no answer within ${result.afterMs} ms`;
      return {
        kind: "answered",
        answer: answerFor("unknown_after_call", { ...facts, detail: message }),
        invocationId: null,
      };
    }
    if ("text" in asked) return { kind: "answered", answer: asked, invocationId: null };
    if (!asked.allow) {
      const answer = await answerForBlocking(call.tool, id, asked.invocation_id, asked.reason);
      return { kind: "answered", answer, invocationId: asked.invocation_id };
    }
    if (needsApproval(call.tool, id.effect)) {
      asked = await approvalHold(call, id, asked);
      if ("text" in asked)
        return { kind: "answered", answer: asked, invocationId: asked.envelope.invocation_id as string };
      if (!asked.allow) {
        const answer = await answerForBlocking(call.tool, id, asked.invocation_id, asked.reason);
        return { kind: "answered", answer, invocationId: asked.invocation_id };
      }
    }
    const inv = asked.invocation_id;
    const attempt = asked.attempt;
    const decision = attempt > 1 && !asked.approvedArguments ? await client.getDecision(inv).catch(() => null) : null;
    // The one place a decision's fields reach the call: a person's edited arguments, when the approval carries them.
    const args = asked.approvedArguments ?? decisionFields(decision).arguments ?? approvedBefore ?? call.args;
    const result = await callWithBudget(
      () => (signal) => execute(args, { idempotencyKey: id.idempotencyKey, invocationId: inv, attempt, signal }),
    );
    const context = { tool: call.tool, effectClass: id.effect ?? "create", attempt, attemptId: `${inv}:a${attempt}` };
    let envelope: unknown;
    try {
      envelope = options.classify
        ? options.classify(result, { tool: call.tool, effectClass: id.effect, attemptId: context.attemptId })
        : classifyCall(result, { ...context, unclassified: id.effect === null }, readAs);
    } catch (error) {
      envelope = classifyCall({ kind: "threw", error }, { ...context, unclassified: true });
    }
    await reportOutcome(recordOf(call, id, inv, attempt), envelope);
    if (result.kind === "returned") return { kind: "ran", value: result.value, invocationId: inv };
    const detail = result.kind === "threw" ? errorText(result.error) : `no answer within ${result.afterMs} ms`;
    let unknown = saysUnknown(envelope);
    if (!unknown) {
      const now: Decision | null = await client.getDecision(inv).catch(() => null);
      unknown = now === null || now.commit_state === "unknown" || now.commit_state === "partial";
    }
    if (unknown)
      return {
        kind: "answered",
        answer: answerFor("unknown_after_call", { ...facts, invocationId: inv, detail }),
        invocationId: inv,
      };
    return { kind: "threw", error: result.kind === "threw" ? result.error : new Error(detail), invocationId: inv };
  }

  return {
    client,
    identify,
    needsApproval,
    run,
    answerFor: answerForBlocking,
    ask,
    reportOutcome: (call, id, inv, attempt, envelope, suffix = "") =>
      reportOutcome(recordOf(call, id, inv, attempt), envelope, suffix),
    approvalHold,
    whenUnreachable,
    approvedArguments,
  };
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300);
