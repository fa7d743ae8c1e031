import {
  Agent,
  run as runAgents,
  setTracingDisabled,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import type {
  HookCallbackMatcher,
  HookJSONOutput,
  Options,
  PostToolUseFailureHookInput,
  PostToolUseHookInput,
  PreToolUseHookInput,
} from "@anthropic-ai/claude-agent-sdk";
import { generateText, stepCountIs, tool as aiTool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import {
  AIMessage,
  createAgent,
  fakeModel,
  tool as lcTool,
  ToolMessage,
  toolRetryMiddleware,
  type AgentMiddleware,
} from "langchain";
import { z } from "zod";
import { withSettle as withSettleAi } from "@settle/ai-sdk";
import { settleHooks } from "@settle/claude-code";
import { settleMiddleware } from "@settle/langchain";
import { withSettle as withSettleAgents } from "@settle/openai-agents";
import type { GateOptions } from "@settle/client";

// One refund agent per framework, each driven by its framework's own loop and
// its own mock model, which asks for the given tool calls one per step. Used by
// `npm run example:frameworks` and by tests/integration/frameworks. Each runner
// resolves with every tool result as the model was shown it, as text.

export type Turn = { tool: "create_refund" | "refund_batch"; args: Record<string, unknown> };
export type RefundTools = {
  create_refund: (args: { payment: string; amount: number }, signal?: AbortSignal) => Promise<unknown>;
  refund_batch: (args: { payments: string[] }) => Promise<unknown>;
};
export type SettleOptions = GateOptions<{ toolCallId?: string } & Record<string, unknown>>;
export type Runner = (turns: Turn[], options: SettleOptions) => Promise<string[]>;

const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
const callId = (i: number) => `call_${i}_${Math.random().toString(36).slice(2, 8)}`;
const refundSchema = z.object({ payment: z.string(), amount: z.number() });
const batchSchema = z.object({ payments: z.array(z.string()) });
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } } as never;

/** The AI SDK (`ai` 7): generateText with its MockLanguageModelV4. */
export function aiSdkModel(turns: Turn[], seen: string[]) {
  let step = 0;
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      if (last?.role === "tool")
        for (const part of last.content)
          if (part.type === "tool-result") {
            const out = part.output as { value?: unknown; reason?: string };
            seen.push(typeof out.value === "string" ? out.value : (out.reason ?? JSON.stringify(out.value)));
          }
      const turn = turns[step];
      step += 1;
      if (!turn)
        return {
          content: [{ type: "text", text: "done" }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        };
      return {
        content: [
          { type: "tool-call", toolCallId: callId(step), toolName: turn.tool, input: JSON.stringify(turn.args) },
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

export const aiSdkTools = (impl: RefundTools) => ({
  create_refund: aiTool({
    description: "Refund a payment",
    inputSchema: refundSchema,
    execute: (args, { abortSignal }) => impl.create_refund(args, abortSignal),
  }),
  refund_batch: aiTool({
    description: "Refund several payments",
    inputSchema: batchSchema,
    execute: (args) => impl.refund_batch(args),
  }),
});

export const aiSdkAgent =
  (impl: RefundTools): Runner =>
  async (turns, options) => {
    const seen: string[] = [];
    await generateText({
      model: aiSdkModel(turns, seen),
      tools: withSettleAi(aiSdkTools(impl), options),
      prompt: "Refund the customer.",
      stopWhen: stepCountIs(turns.length + 1),
      maxRetries: 3,
    });
    return seen;
  };

/** LangChain (`langchain` v1): createAgent with fakeModel(), Settle alone or beside toolRetryMiddleware. */
export const langchainAgent =
  (impl: RefundTools, placement: "alone" | "before retry" | "after retry" = "alone"): Runner =>
  async (turns, options) => {
    const model = fakeModel();
    turns.forEach((turn, i) => model.respondWithTools([{ name: turn.tool, args: turn.args, id: callId(i) }]));
    model.respond(new AIMessage("done"));
    const tools = [
      lcTool(async (args, config) => text(await impl.create_refund(args, config.signal)), {
        name: "create_refund",
        description: "Refund a payment",
        schema: refundSchema,
      }),
      lcTool(async (args) => text(await impl.refund_batch(args)), {
        name: "refund_batch",
        description: "Refund several payments",
        schema: batchSchema,
      }),
    ];
    const settle = settleMiddleware(options);
    const retry = toolRetryMiddleware({ maxRetries: 2, initialDelayMs: 10 });
    const middleware: AgentMiddleware[] =
      placement === "alone" ? [settle] : placement === "before retry" ? [settle, retry] : [retry, settle];
    const result = await createAgent({ model, tools, middleware }).invoke({
      messages: [{ role: "user", content: "Refund the customer." }],
    });
    return result.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => text(m.content));
  };

/** A Model for the OpenAI Agents SDK that asks for one function call per turn, then answers. */
export class ScriptedModel implements Model {
  private step = 0;
  constructor(
    private readonly turns: Turn[],
    private readonly seen: string[],
  ) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const last = (Array.isArray(request.input) ? request.input.at(-1) : undefined) as
      { type?: string; output?: unknown } | undefined;
    if (last?.type === "function_call_result") {
      const out = last.output as string | { text?: string };
      this.seen.push(typeof out === "string" ? out : (out.text ?? JSON.stringify(out)));
    }
    const turn = this.turns[this.step];
    this.step += 1;
    const output = turn
      ? [
          {
            type: "function_call" as const,
            callId: callId(this.step),
            name: turn.tool,
            arguments: JSON.stringify(turn.args),
            status: "completed" as const,
          },
        ]
      : [
          {
            type: "message" as const,
            role: "assistant" as const,
            status: "completed" as const,
            content: [{ type: "output_text" as const, text: "done" }],
          },
        ];
    return { usage: new Usage(), output } as ModelResponse;
  }
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed here");
  }
}

export const agentsDefinitions = (impl: RefundTools) => [
  {
    name: "create_refund",
    description: "Refund a payment",
    parameters: refundSchema,
    execute: async (args: { payment: string; amount: number }, _c?: unknown, details?: { signal?: AbortSignal }) =>
      text(await impl.create_refund(args, details?.signal)),
  },
  {
    name: "refund_batch",
    description: "Refund several payments",
    parameters: batchSchema,
    execute: async (args: { payments: string[] }) => text(await impl.refund_batch(args)),
  },
];

/** The OpenAI Agents SDK (@openai/agents): run() with a custom Model. */
export const openaiAgentsAgent =
  (impl: RefundTools): Runner =>
  async (turns, options) => {
    setTracingDisabled(true);
    const seen: string[] = [];
    const agent = new Agent({
      name: "refunds",
      instructions: "Refund.",
      model: new ScriptedModel(turns, seen),
      tools: withSettleAgents(agentsDefinitions(impl), options),
    });
    await runAgents(agent, "Refund the customer.", { maxTurns: turns.length + 2 });
    return seen;
  };

type Hooks = NonNullable<Options["hooks"]>;
type ToolHookInput = PreToolUseHookInput | PostToolUseHookInput | PostToolUseFailureHookInput;

export async function callHook(
  matchers: HookCallbackMatcher[] | undefined,
  input: ToolHookInput,
): Promise<HookJSONOutput> {
  const hook = matchers?.[0]?.hooks[0];
  if (!hook) throw new Error("no hook registered");
  return hook(input, input.tool_use_id, { signal: new AbortController().signal });
}
const specific = (out: HookJSONOutput) =>
  "hookSpecificOutput" in out ? (out.hookSpecificOutput as Record<string, string | undefined>) : undefined;

/**
 * Claude Code's tool loop as its hooks see it (settleHooks, typed against the Agent SDK's hook types): PreToolUse;
 * unless denied, the tool (with its timeout); then PostToolUse or PostToolUseFailure. Claude Code itself (a ~420 MB
 * binary that talks to Anthropic's API) is not run.
 */
export const claudeCodeAgent =
  (impl: RefundTools): Runner =>
  async (turns, options) => {
    const hooks: Hooks = settleHooks({ ...options, matcher: "create_refund|refund_batch" });
    const seen: string[] = [];
    for (const [i, turn] of turns.entries()) {
      const base = {
        session_id: "session-1",
        transcript_path: "/tmp/t.jsonl",
        cwd: "/work",
        tool_name: turn.tool,
        tool_input: turn.args,
        tool_use_id: `toolu_${callId(i)}`,
      };
      const pre = specific(await callHook(hooks.PreToolUse, { ...base, hook_event_name: "PreToolUse" }));
      if (pre?.permissionDecision === "deny") {
        seen.push(pre.permissionDecisionReason ?? "denied");
        continue;
      }
      // A hook's updatedInput is what Claude Code runs the tool with (Settle's: arguments a person approved).
      const input =
        (pre as unknown as { updatedInput?: Record<string, unknown> } | undefined)?.updatedInput ?? turn.args;
      base.tool_input = input;
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), options.timeoutMs ?? 60_000);
      try {
        const args = input as { payment: string; amount: number; payments: string[] };
        const response =
          turn.tool === "create_refund" ? await impl.create_refund(args, abort.signal) : await impl.refund_batch(args);
        const post = specific(
          await callHook(hooks.PostToolUse, { ...base, hook_event_name: "PostToolUse", tool_response: response }),
        );
        seen.push(post?.additionalContext ?? text(response));
      } catch (error) {
        const post = specific(
          await callHook(hooks.PostToolUseFailure, {
            ...base,
            hook_event_name: "PostToolUseFailure",
            error: String(error),
          }),
        );
        seen.push(post?.additionalContext ?? String(error));
      } finally {
        clearTimeout(timer);
      }
    }
    return seen;
  };

export const frameworks = {
  "ai-sdk": aiSdkAgent,
  langchain: langchainAgent,
  "openai-agents": openaiAgentsAgent,
  "claude-code": claudeCodeAgent,
} as const;
export type Framework = keyof typeof frameworks;
