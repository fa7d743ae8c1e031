import { createGate, type GateOptions } from "@settle/client";
import { createMiddleware, ToolMessage, type ToolCallRequest } from "langchain";

// Settle for LangChain.js (langchain v1): settleMiddleware(options) for
// createAgent({ middleware }). It puts Settle between the agent and each
// tool's execution itself — the tool the request carries is replaced by one
// that asks Settle first — so every attempt any retry layer makes
// (toolRetryMiddleware, listed before or after it) goes through Settle's guard,
// and a write whose outcome is unknown is never run again. When Settle
// answers instead of the tool, or the outcome is unknown, the agent gets a
// ToolMessage with one plain sentence and status "error", never an
// exception a retry layer would catch. A tool's own ToolMessage with status
// "error" is read as a failure, not a success.

/** What a per-call option is given: the tool call, and the agent's state and runtime. */
export type LangChainCallContext = {
  toolCallId?: string;
  state: Record<string, unknown>;
  runtime: ToolCallRequest["runtime"];
};

export type SettleOptions = GateOptions<LangChainCallContext & Record<string, unknown>>;

type Invocable = {
  name: string;
  invoke: (input: unknown, config?: Record<string, unknown>) => Promise<unknown>;
};

const textOf = (content: unknown) => (typeof content === "string" ? content : JSON.stringify(content));

/** What a tool's message says, for Settle to read: its content (JSON when it is JSON), and a failure when its status is "error". */
export function readToolMessage(value: unknown): unknown {
  if (!ToolMessage.isInstance(value)) return value;
  const text = textOf(value.content);
  if (value.status === "error") return { error: text };
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function settleMiddleware(options: SettleOptions) {
  const gate = createGate(options);

  /** The tool as Settle runs it: the same tool, whose invoke asks Settle first. */
  function guarded(tool: Invocable, request: ToolCallRequest): Invocable {
    const call = request.toolCall;
    const ctx = { toolCallId: call.id, state: request.state, runtime: request.runtime } as LangChainCallContext &
      Record<string, unknown>;
    const wrapper = Object.create(tool) as Invocable;
    wrapper.invoke = async (input, config = {}) => {
      const result = await gate.run(
        { tool: call.name, args: call.args, ctx },
        (args, info) => {
          const given = config.signal as AbortSignal | undefined;
          const signal = given ? AbortSignal.any([given, info.signal]) : info.signal;
          const next = typeof input === "object" && input !== null ? { ...input, args } : input;
          return tool.invoke(next, { ...config, signal });
        },
        readToolMessage,
      );
      if (result.kind === "ran") return result.value;
      if (result.kind === "threw") throw result.error;
      return new ToolMessage({
        content: result.answer.text,
        tool_call_id: call.id ?? "",
        name: call.name,
        status: "error",
        artifact: result.answer.envelope,
      });
    };
    return wrapper;
  }

  return createMiddleware({
    name: "SettleMiddleware",
    wrapToolCall: async (request, handler) => {
      const tool = request.tool as Invocable | undefined;
      if (!tool || typeof tool.invoke !== "function") return handler(request);
      return handler({ ...request, tool: guarded(tool, request as ToolCallRequest) as typeof request.tool });
    },
  });
}
