import { approvalFor, awaitApproval, createGate, type Gate, type GateOptions } from "@settle/client";
import { tool, type FunctionTool, type RunContext, type RunResult, type RunState } from "@openai/agents";

// Settle for the OpenAI Agents SDK (@openai/agents): withSettle(definitions,
// options) takes what you would pass to tool() and returns the tools, each
// execute guarded by Settle (intent written ahead, outcome reported and
// classified) and, for calls that need a person, a needsApproval backed by
// Settle: the run stops with an interruption, and settleInterruptions() resolves
// it from the console's decision. Settle wraps execute itself, not a built
// tool: a built tool turns a thrown error into a "please try again" string
// before anyone outside can see that it failed.

/** What a per-call option is given: the SDK's run context and the call's id. */
export type AgentsCallContext = { toolCallId?: string; runContext?: RunContext<unknown> };

export type SettleOptions = GateOptions<AgentsCallContext & Record<string, unknown>>;

/** The options of tool(): a name, parameters and an execute (see the SDK's tool()). */
export type ToolDefinition = {
  name: string;
  execute: (
    input: never,
    context?: RunContext<never>,
    details?: { toolCall?: { callId?: string }; signal?: AbortSignal },
  ) => unknown;
  needsApproval?: boolean | ((runContext: RunContext<never>, input: never, callId?: string) => Promise<boolean>);
} & Record<string, unknown>;

const GATE = Symbol.for("settle.openai-agents.gate");
// The SDK's own types for a tool of any context, parameters and result.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTool = FunctionTool<any, any, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyRun = RunResult<any, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyState = RunState<any, any>;
type Guarded = { [GATE]?: Gate<AgentsCallContext & Record<string, unknown>> };

export function withSettle(definitions: ToolDefinition[], options: SettleOptions): AnyTool[] {
  const gate = createGate(options);
  return definitions.map((definition) => {
    if (typeof definition.execute !== "function" || typeof (definition as { invoke?: unknown }).invoke === "function")
      throw new TypeError(
        `withSettle takes the options you would pass to tool() (name, parameters, execute), not a tool already built: ${String(definition.name)}`,
      );
    const name = definition.name;
    const own = definition.needsApproval;
    const execute = definition.execute as (
      input: unknown,
      context?: unknown,
      details?: Record<string, unknown>,
    ) => unknown;
    const built = tool({
      ...(definition as object),
      execute: async (
        input: unknown,
        runContext?: RunContext<unknown>,
        details?: { toolCall?: { callId?: string }; signal?: AbortSignal },
      ) => {
        const ctx = { toolCallId: details?.toolCall?.callId, runContext } as AgentsCallContext &
          Record<string, unknown>;
        const result = await gate.run({ tool: name, args: input, ctx }, async (args, info) => {
          const signal = details?.signal ? AbortSignal.any([details.signal, info.signal]) : info.signal;
          return execute(args, runContext, { ...details, signal });
        });
        if (result.kind === "ran") return result.value;
        if (result.kind === "answered") return result.answer.text;
        throw result.error;
      },
      ...(options.approvals
        ? {
            needsApproval: async (runContext: RunContext<unknown>, input: unknown, callId?: string) => {
              if (typeof own === "function" ? await own(runContext as never, input as never, callId) : own === true)
                return true;
              const ctx = { toolCallId: callId, runContext } as AgentsCallContext & Record<string, unknown>;
              return (await approvalFor(gate, { tool: name, args: input, ctx })).state === "pending";
            },
          }
        : {}),
    } as Parameters<typeof tool>[0]);
    Object.defineProperty(built, GATE, { value: gate, enumerable: false });
    return built;
  });
}

type Interruption = AnyRun["interruptions"][number];

/**
 * Resolves a run's interruptions from Settle's console: each approval request a person approved there is approved in
 * the run's state, each rejected one rejected (with Settle's reason as the message the model sees). Calls still
 * waiting after `waitMs` are returned in `pending`; run the agent again with `state` once `pending` is empty.
 */
export async function settleInterruptions(
  tools: AnyTool[],
  result: { interruptions: Interruption[]; state: AnyState },
  options: { waitMs?: number } = {},
): Promise<{ approved: number; rejected: number; pending: Interruption[] }> {
  let approved = 0;
  let rejected = 0;
  const pending: Interruption[] = [];
  for (const item of result.interruptions) {
    const gate = (tools.find((t) => t.name === item.name) as Guarded | undefined)?.[GATE];
    if (!gate) {
      pending.push(item);
      continue;
    }
    const raw = item.rawItem as { arguments?: string; callId?: string };
    let args: unknown = {};
    try {
      args = JSON.parse(raw.arguments ?? "{}");
    } catch {
      args = raw.arguments;
    }
    const answer = await awaitApproval(
      gate,
      { tool: item.name ?? "", args, ctx: { toolCallId: raw.callId } },
      options.waitMs ?? 0,
    );
    if (answer.state === "approved" || answer.state === "not_needed") {
      result.state.approve(item);
      approved += 1;
    } else if (answer.state === "rejected" || answer.state === "escalated") {
      result.state.reject(item, { message: answer.reason ?? "Rejected in Settle." });
      rejected += 1;
    } else pending.push(item);
  }
  return { approved, rejected, pending };
}
