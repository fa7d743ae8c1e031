import { answerFor, classifyCall, createGate, type Answer, type EffectClass, type GateOptions } from "@settle/client";
import type {
  HookJSONOutput,
  PostToolUseFailureHookInput,
  PostToolUseHookInput,
  PreToolUseHookInput,
} from "@anthropic-ai/claude-agent-sdk";
import type { CallStore } from "./store.js";

// Claude Code's tool hooks under Settle, shared by the settle-hook command and
// settleHooks() for the Agent SDK's query(). PreToolUse asks Settle's guard
// (the intent is written ahead) and answers deny — or ask, for a call a person
// must approve — with Settle's one plain sentence; PostToolUse and
// PostToolUseFailure report the outcome, keyed by tool_use_id, and tell the
// model in one sentence when the outcome is unknown. Claude Code runs the
// tool between the two hooks, so what the guard allowed is kept in a store
// (a file per call for the command, which is a new process each time).

/** What a per-call option is given: the hook input as Claude Code sends it. */
export type HookContext = { toolCallId?: string; session_id: string; cwd: string } & Record<string, unknown>;

export type SettleHookOptions = Omit<GateOptions<HookContext>, "taskId"> & {
  /** Default: the Claude Code session (session_id). */
  taskId?: GateOptions<HookContext>["taskId"];
};

/** Claude Code's own tools that change nothing: never guarded. Any other tool takes its class from `effects` or the catalog. */
export const readOnlyTools: Record<string, EffectClass> = {
  Read: "read",
  Glob: "read",
  Grep: "read",
  LS: "read",
  WebFetch: "read",
  WebSearch: "read",
  NotebookRead: "read",
  TodoWrite: "read",
};

type ToolInput = { tool_name: string; tool_input: unknown; tool_use_id: string } & HookContext;

export function createHookHandlers(options: SettleHookOptions, store: CallStore) {
  const gate = createGate<HookContext>({
    ...options,
    taskId: options.taskId ?? ((ctx) => ctx.session_id),
    effects: { ...readOnlyTools, ...options.effects },
  });
  const callOf = (input: ToolInput) => ({
    tool: input.tool_name,
    args: input.tool_input,
    ctx: { ...input, toolCallId: input.tool_use_id } as HookContext,
  });
  const deny = (answer: Answer, decision: "deny" | "ask" = "deny"): HookJSONOutput => ({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: decision,
      permissionDecisionReason: answer.text,
    },
  });

  async function preToolUse(input: PreToolUseHookInput): Promise<HookJSONOutput> {
    const call = callOf(input as ToolInput);
    const id = await gate.identify(call);
    if (id.effect === "read") return {};
    // Approved with edits since it was held: the guard is asked with the approved arguments (see the end).
    const approvedBefore = await gate.approvedArguments(call, id);
    const asked = await gate.ask(approvedBefore ? { ...call, args: approvedBefore } : call, id);
    const facts = { tool: call.tool, invocationId: null, idempotencyKey: id.idempotencyKey };
    if (asked === null)
      return gate.whenUnreachable(call.tool, id.effect) === "refuse"
        ? deny(answerFor("settle_unreachable", facts))
        : {};
    if ("text" in asked) return deny(asked);
    if (!asked.allow) return deny(await gate.answerFor(call.tool, id, asked.invocation_id, asked.reason));
    let allowed = asked;
    let edited = approvedBefore;
    if (gate.needsApproval(call.tool, id.effect)) {
      const held = await gate.approvalHold(call, id, asked);
      if ("text" in held) return deny(held, held.kind === "awaiting_approval" ? "ask" : "deny");
      if (!held.allow) return deny(await gate.answerFor(call.tool, id, held.invocation_id, held.reason));
      allowed = held;
      edited = held.approvedArguments ?? edited;
    }
    await store.put(input.tool_use_id, { invocationId: allowed.invocation_id, attempt: allowed.attempt, ...id });
    if (!edited) return {};
    // A person approved other arguments in Settle: Claude Code runs the tool with exactly those.
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        permissionDecisionReason: `Approved in Settle with edited arguments.`,
        updatedInput: edited,
      },
    };
  }

  /** Reports one outcome; says so to the model when it is unknown. */
  async function report(
    input: ToolInput,
    result: Parameters<typeof classifyCall>[0],
    event: "PostToolUse" | "PostToolUseFailure",
  ): Promise<HookJSONOutput> {
    const kept = await store.take(input.tool_use_id);
    if (!kept) return {};
    const call = callOf(input);
    const id = { taskId: kept.taskId, idempotencyKey: kept.idempotencyKey, effect: kept.effect };
    const attemptId = `${kept.invocationId}:a${kept.attempt}`;
    const envelope = options.classify
      ? options.classify(result, { tool: call.tool, effectClass: kept.effect, attemptId })
      : classifyCall(result, {
          tool: call.tool,
          effectClass: kept.effect ?? "create",
          attempt: kept.attempt,
          attemptId,
          unclassified: kept.effect === null,
        });
    await gate.reportOutcome(call, id, kept.invocationId, kept.attempt, envelope);
    const unknown = (envelope as { outcome?: unknown }).outcome === "unknown";
    if (!unknown) return {};
    const detail = result.kind === "threw" ? String(result.error) : "the tool's result says it failed";
    const text = answerFor("unknown_after_call", {
      tool: call.tool,
      invocationId: kept.invocationId,
      idempotencyKey: kept.idempotencyKey,
      detail,
    }).text;
    return { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
  }

  return {
    preToolUse,
    postToolUse: (input: PostToolUseHookInput) =>
      report(input as ToolInput, { kind: "returned", value: input.tool_response }, "PostToolUse"),
    postToolUseFailure: (input: PostToolUseFailureHookInput) =>
      report(input as ToolInput, { kind: "threw", error: new Error(input.error.slice(0, 300)) }, "PostToolUseFailure"),
  };
}
