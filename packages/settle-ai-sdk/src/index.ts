import { approvalFor, awaitApproval, createGate, type Gate, type GateOptions, type SettleClient } from "@settle/client";
import type { ModelMessage, ToolApprovalResponse, ToolExecutionOptions, ToolSet } from "ai";

// Settle for the Vercel AI SDK (`ai` 7): withSettle(tools, options) returns
// the same ToolSet for generateText, streamText and the Agent classes, each
// execute guarded by Settle (intent written ahead, outcome reported and
// classified). When Settle refuses a call, or its outcome is unknown, the
// tool's result is one plain sentence for the model — never a thrown error.
// A tool whose class needs approval gets needsApproval answered by Settle's
// console; settleApprovals() turns its decisions into the SDK's approval responses.

/** What a per-call option is given: the AI SDK's own call details. */
export type AiSdkCallContext = {
  toolCallId: string;
  messages: ModelMessage[];
  context: unknown;
};

export type SettleOptions = GateOptions<AiSdkCallContext & Record<string, unknown>>;

const GATE = Symbol.for("settle.ai-sdk.gate");
type Guarded = { [GATE]?: Gate<AiSdkCallContext & Record<string, unknown>> };

/** The last value an execute produced (a streaming tool yields several; the last is its result). */
async function finalValue(output: unknown): Promise<unknown> {
  if (output !== null && typeof output === "object" && Symbol.asyncIterator in output) {
    let last: unknown;
    for await (const value of output as AsyncIterable<unknown>) last = value;
    return last;
  }
  return output;
}

const ctxOf = (options: Partial<ToolExecutionOptions<unknown>>) =>
  ({
    toolCallId: options.toolCallId ?? "",
    messages: options.messages ?? [],
    context: options.context,
  }) as AiSdkCallContext & Record<string, unknown>;

/** Every tool with an execute goes through Settle; tools without one (client-side tools) are left as they are. */
export function withSettle<TOOLS extends ToolSet>(tools: TOOLS, options: SettleOptions): TOOLS {
  const gate = createGate(options);
  const guarded: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute as ((input: unknown, o: ToolExecutionOptions<unknown>) => unknown) | undefined;
    if (!execute) {
      guarded[name] = tool;
      continue;
    }
    const own = tool.needsApproval;
    guarded[name] = {
      ...tool,
      execute: async (input: unknown, callOptions: ToolExecutionOptions<unknown>) => {
        const result = await gate.run({ tool: name, args: input, ctx: ctxOf(callOptions) }, async (args, info) => {
          const signal = callOptions.abortSignal
            ? AbortSignal.any([callOptions.abortSignal, info.signal])
            : info.signal;
          return finalValue(await execute(args, { ...callOptions, abortSignal: signal }));
        });
        if (result.kind === "ran") return result.value;
        if (result.kind === "answered") return result.answer.text;
        throw result.error;
      },
      ...(options.approvals
        ? {
            needsApproval: async (input: unknown, callOptions: Omit<ToolExecutionOptions<unknown>, "abortSignal">) => {
              if (typeof own === "function" ? await own(input as never, callOptions as never) : own === true)
                return true;
              const answer = await approvalFor(gate, { tool: name, args: input, ctx: ctxOf(callOptions) });
              // Approved or rejected in Settle: execute runs, and Settle's guard lets it through or answers "rejected".
              return answer.state === "pending";
            },
          }
        : {}),
    };
  }
  Object.defineProperty(guarded, GATE, { value: gate, enumerable: false });
  return guarded as TOOLS;
}

/** The Settle client behind tools made by withSettle (to report, read decisions, serve verifiers). */
export function settleClientOf(tools: ToolSet): SettleClient | null {
  return (tools as Guarded)[GATE]?.client ?? null;
}

type ApprovalRequestPart = {
  type: "tool-approval-request";
  approvalId: string;
  toolCall: { toolName: string; input: unknown; toolCallId: string };
};

/**
 * Settle's decisions on a result's approval requests, as the tool message the SDK takes next: an approval a person
 * gave in Settle's console is `approved`, a rejection `approved: false` with its reason. Requests still waiting after
 * `waitMs` are left out (`pending` lists them): ask again later.
 */
export async function settleApprovals(
  tools: ToolSet,
  content: ReadonlyArray<{ type: string }>,
  options: { waitMs?: number } = {},
): Promise<{ message: ModelMessage | null; pending: string[] }> {
  const gate = (tools as Guarded)[GATE];
  if (!gate) throw new Error("settleApprovals takes the tools withSettle returned.");
  const requests = content.filter((p): p is ApprovalRequestPart => p.type === "tool-approval-request");
  const responses: ToolApprovalResponse[] = [];
  const pending: string[] = [];
  for (const request of requests) {
    const call = {
      tool: request.toolCall.toolName,
      args: request.toolCall.input,
      ctx: { toolCallId: request.toolCall.toolCallId, messages: [], context: undefined },
    };
    const answer = await awaitApproval(gate, call, options.waitMs ?? 0);
    if (answer.state === "pending") pending.push(request.approvalId);
    else
      responses.push({
        type: "tool-approval-response",
        approvalId: request.approvalId,
        // Escalated with a reply counts as a no for now: the model reads the reply (a later call runs once approved).
        approved: answer.state === "approved" || answer.state === "not_needed",
        ...(answer.reason ? { reason: answer.reason } : {}),
      });
  }
  return { message: responses.length > 0 ? { role: "tool", content: responses } : null, pending };
}
