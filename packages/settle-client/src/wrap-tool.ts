import { classifyResult, probeEnvelope, type CallResult, type ClassifyContext, type ProbeFinding } from "./classify.js";
import { SettleError } from "./errors.js";
import type { AwaitDecisionOptions } from "./decisions.js";
import type { Decision, EffectClass, GuardAnswer, GuardInput, ReportResult, SettleRecord } from "./types.js";

// Seed 002's discipline around one tool call: ask the guard, write the intent
// before dispatch, call, classify the result into an envelope, report it, and
// then do what Settle decides. An unknown outcome is never retried on a
// guess: it is probed (when the caller can look the effect up) and the tool
// is called again only when Settle's decision is `retry_allowed` (or
// `proceed` after an approval), always with the same idempotency key.

export type WrapDeps = {
  report: (records: SettleRecord[]) => Promise<ReportResult[]>;
  guard: (input: GuardInput) => Promise<GuardAnswer>;
  getDecision: (invocationId: string) => Promise<Decision>;
  awaitDecision: (invocationId: string, options: AwaitDecisionOptions) => Promise<Decision>;
  now: () => number;
};

/** What the wrapped function is called with, besides its own arguments. */
export type ToolCall = { idempotencyKey: string; invocationId: string; attempt: number; signal: AbortSignal };

type PerCall<A> = string | ((args: A) => string);

export type WrapToolOptions<A, R> = {
  tool: string;
  effectClass: EffectClass;
  taskId: PerCall<A>;
  /** Derived from the intent (task, actor, verb, target, slot), never from the payload (source article 002 (docs/outcome-model.md)). */
  idempotencyKey: PerCall<A>;
  /** Default: the guard's answer, which Settle derives from the task and the key. */
  invocationId?: PerCall<A>;
  /** Turns what the call produced into an envelope in any dialect Settle reads. Default: `classifyResult`. */
  classify?: (result: CallResult<R>, context: ClassifyContext) => unknown;
  /** Looks the effect up by idempotency key. Throwing means the probe itself failed. */
  probe?: (idempotencyKey: string, context: { invocationId: string; attempt: number }) => Promise<ProbeFinding<R>>;
  /** One call's budget: past it the outcome is recorded as unknown (the call may still land) and the signal aborts. */
  timeoutMs?: number;
  /** How long to wait for Settle's decision (a person may be deciding). Default 60 s. */
  decisionTimeoutMs?: number;
  /** Tool calls one run may make, counting retries Settle allows. Default 3. */
  maxCalls?: number;
  /** Ask POST /api/v1/guard before the first call. Default true. */
  guard?: boolean;
  /**
   * Send the call's arguments to the guard and with its intent (when they are a plain JSON object), so the console
   * shows what the call was and Settle can tell the same call under a new key. Settle redacts secrets under tell-tale keys; turn
   * this off for a tool whose arguments must not leave the runtime at all. Default true.
   */
  sendArguments?: boolean;
};

export type ToolRunStatus =
  /** The effect is committed (by this call, an earlier one, or found by a probe). */
  | "done"
  /** Some items applied: `value` has them; retry the rest under a new key. */
  | "partial"
  /** Not committed; the request has to change. */
  | "needs_input"
  /** Not committed and not to be retried (refused, rejected, failed). */
  | "abandoned"
  /** Settle has no decision to act on yet (a person is looking): do not call again, report it. */
  | "unresolved";

export type ToolRun<R> = {
  status: ToolRunStatus;
  /** What the last call returned, or what a probe found. */
  value: R | undefined;
  decision: Decision | null;
  invocationId: string;
  idempotencyKey: string;
  /** Tool calls this run made; 0 when the guard said the work was done or unresolved elsewhere. */
  calls: number;
  /**
   * A person's message to the agent with the rejection or escalation that ended the run (`abandoned`, or
   * `unresolved` while escalated): hand it to the model as the tool's result. Null when none was given.
   */
  reply: string | null;
  /** The arguments a person approved in place of the call's own, when the tool ran with them (approve with edits). */
  approvedArguments: Record<string, unknown> | null;
};

const pick = <A>(value: PerCall<A>, args: A) => (typeof value === "function" ? value(args) : value);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Reports one record and waits for Settle's answer; a rejected record is an error (nothing was stored). */
async function reportOne(deps: WrapDeps, record: SettleRecord): Promise<ReportResult> {
  const [result] = await deps.report([record]);
  if (result && result.status !== "rejected") return result;
  throw new SettleError(
    `Settle rejected the ${record.phase} record ${record.event_id}: ${result?.error?.agent_message ?? "no reason given"}`,
    {
      status: 207,
      code: result?.error?.code ?? "REJECTED",
      envelope: result?.error ?? null,
    },
  );
}

export function wrapTool<A, R>(
  deps: WrapDeps,
  fn: (args: A, call: ToolCall) => Promise<R>,
  options: WrapToolOptions<A, R>,
) {
  const classify = options.classify ?? classifyResult;
  const maxCalls = options.maxCalls ?? 3;
  const decisionTimeoutMs = options.decisionTimeoutMs ?? 60_000;
  const argumentsOf = (args: A): { arguments?: Record<string, unknown> } =>
    options.sendArguments !== false && isPlainObject(args) && Object.keys(args).length > 0 ? { arguments: args } : {};

  return async function run(args: A): Promise<ToolRun<R>> {
    const taskId = pick(options.taskId, args);
    const key = pick(options.idempotencyKey, args);
    let invocationId = options.invocationId ? pick(options.invocationId, args) : `${taskId}:${key}`;
    let attempt = 0;
    let calls = 0;
    /** The decision version at which the guard last refused a call: that state does not allow one, whatever it says. */
    let deniedAt: number | null = null;
    let value: R | undefined;
    const probedVersions = new Set<number>();
    const iso = () => new Date(deps.now()).toISOString();
    const base = (n: number, phase: "intent" | "outcome" | "probe", suffix = ""): SettleRecord => ({
      event_id: `${invocationId}:a${n}:${phase}${suffix}`,
      task_id: taskId,
      invocation_id: invocationId,
      ...(n > 0 ? { attempt: n, attempt_id: `${invocationId}:a${n}` } : {}),
      tool: options.tool,
      phase,
      at: iso(),
      idempotency_key: key,
      effect_class: options.effectClass,
    });
    /** What the tool is called with: the call's own arguments, or those a person approved in their place. */
    let callArgs: A = args;
    let approvedArguments: Record<string, unknown> | null = null;
    const finish = (status: ToolRunStatus, decision: Decision | null): ToolRun<R> => ({
      status,
      value,
      decision,
      invocationId,
      idempotencyKey: key,
      calls,
      reply: typeof decision?.reply === "string" && decision.reply.trim() !== "" ? decision.reply : null,
      approvedArguments,
    });

    /** Writes the intent before dispatch. A `duplicate` on first delivery means an earlier run used this attempt number. */
    async function writeIntent(n: number): Promise<number> {
      for (;;) {
        const budget = options.timeoutMs ? { budget_left_s: Math.ceil(options.timeoutMs / 1000) } : {};
        const result = await reportOne(deps, { ...base(n, "intent"), ...budget, ...argumentsOf(callArgs) });
        if (result.status === "accepted" || result.resent) return n;
        n += 1;
      }
    }

    async function callOnce(n: number): Promise<CallResult<R>> {
      const controller = new AbortController();
      const running = Promise.resolve()
        .then(() => fn(callArgs, { idempotencyKey: key, invocationId, attempt: n, signal: controller.signal }))
        .then(
          (v): CallResult<R> => ({ kind: "returned", value: v }),
          (error: unknown): CallResult<R> => ({ kind: "threw", error }),
        );
      if (!options.timeoutMs) return running;
      const afterMs = options.timeoutMs;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<CallResult<R>>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "timed_out", afterMs }), afterMs);
      });
      const result = await Promise.race([running, timedOut]);
      clearTimeout(timer);
      // Cancel, don't orphan: a tool that ignores the signal may still land, which is why this is `unknown`.
      if (result.kind === "timed_out") controller.abort(new Error(`budget of ${afterMs} ms spent`));
      return result;
    }

    /** Asks the guard before every call, so that two workers following one decision cannot both act on it. */
    async function guardAllows(): Promise<boolean> {
      if (options.guard === false) return true;
      const named = options.invocationId !== undefined || calls > 0;
      const answer = await deps.guard({
        task_id: taskId,
        ...(named ? { invocation_id: invocationId } : {}),
        tool: options.tool,
        idempotency_key: key,
        effect_class: options.effectClass,
        at: iso(),
        // The guard holds a write under a new key against the same call only if it sees the arguments (decision 028);
        // after an approval with edits, those the tool runs with.
        ...argumentsOf(callArgs),
      });
      // Before the first call Settle names the invocation: this one, or the one that blocks it.
      if (!named) invocationId = answer.invocation_id;
      return answer.allow;
    }

    /** One transport attempt: guard, intent, call, outcome. Returns Settle's decision after it. */
    async function attemptOnce(): Promise<Decision> {
      if (!(await guardAllows())) {
        // Committed, unresolved or in flight elsewhere: no call; follow Settle instead.
        const decision = await deps.getDecision(invocationId);
        deniedAt = decision.version;
        return decision;
      }
      attempt = await writeIntent(attempt + 1);
      calls += 1;
      const result = await callOnce(attempt);
      if (result.kind === "returned") value = result.value;
      let envelope: unknown;
      try {
        envelope = classify(result, {
          tool: options.tool,
          effectClass: options.effectClass,
          attempt,
          attemptId: `${invocationId}:a${attempt}`,
        });
      } catch (error) {
        // A classifier that cannot read the result has no evidence either way.
        envelope = classifyResult(
          { kind: "threw", error },
          { tool: options.tool, effectClass: "create", attempt, attemptId: `${invocationId}:a${attempt}` },
        );
      }
      await reportOne(deps, { ...base(attempt, "outcome"), envelope });
      return deps.getDecision(invocationId);
    }

    const mayProbe = (d: Decision) =>
      options.probe !== undefined &&
      !probedVersions.has(d.version) &&
      (d.decision === "verify" ||
        (d.commit_state === "unknown" && (d.status === "outcome_unknown" || d.status === "stalled")));

    /** Seed 002: a retry is a guess, a probe is a measurement. */
    async function probeOnce(d: Decision): Promise<Decision> {
      probedVersions.add(d.version);
      let finding: ProbeFinding<R> | { failed: unknown };
      try {
        finding = await options.probe!(key, { invocationId, attempt });
        if (finding.found && finding.value !== undefined) value = finding.value;
      } catch (error) {
        finding = { failed: error };
      }
      await reportOne(deps, { ...base(attempt, "probe", `:v${d.version}`), envelope: probeEnvelope(finding) });
      return deps.getDecision(invocationId);
    }

    /** Acts on Settle's decisions until one ends the run or the wait for a person runs out. */
    async function follow(first: Decision): Promise<ToolRun<R>> {
      const deadline = deps.now() + decisionTimeoutMs;
      let d = first;
      for (;;) {
        if (mayProbe(d)) {
          d = await probeOnce(d);
          continue;
        }
        if ((d.decision === "retry_allowed" || d.decision === "proceed") && deniedAt !== d.version) {
          if (calls >= maxCalls) return finish("unresolved", d);
          if (d.decision === "proceed" && isPlainObject(d.approved_arguments)) {
            // Approved with edits: the tool runs with exactly what the person approved, and its intent says so.
            approvedArguments = d.approved_arguments;
            callArgs = d.approved_arguments as A;
          }
          d = await attemptOnce();
          continue;
        }
        if (d.decision === "do_not_retry") return finish("done", d);
        if (d.decision === "correct_input") return finish("needs_input", d);
        if (d.decision === "abandon") return finish("abandoned", d);
        if (d.status === "partially_applied") return finish("partial", d);
        // wait, verify without a probe, or an allowance the guard refused: until something changes.
        const remaining = deadline - deps.now();
        if (remaining <= 0) return finish("unresolved", d);
        const seen = d;
        const changed = (x: Decision) =>
          x.version !== seen.version || x.decision !== seen.decision || x.status !== seen.status || mayProbe(x);
        d = await deps.awaitDecision(invocationId, { timeout: remaining, until: changed });
        if (!changed(d)) return finish("unresolved", d);
      }
    }

    return follow(await attemptOnce());
  };
}
