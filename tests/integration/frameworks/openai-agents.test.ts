import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Agent,
  run as runAgent,
  setTracingDisabled,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import { z } from "zod";
import { settleInterruptions, withSettle, type SettleOptions } from "@settle/openai-agents";
import { actOnInvocation } from "@/lib/invocations/act";
import { invocationsOf, openEnv, sixFailures, waitFor, type Env, type Turn } from "./kit";

// @settle/openai-agents through the Agents SDK's own run loop (run(agent, …))
// with a custom Model, against a real Settle over HTTP.

setTracingDisabled(true);

/** A Model that asks for one function call per turn, in order, then answers; it records the outputs it was shown. */
class ScriptedModel implements Model {
  private step = 0;
  constructor(
    private readonly turns: Turn[],
    private readonly seen: string[],
  ) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = Array.isArray(request.input) ? request.input : [];
    const last = items.at(-1) as { type?: string; output?: unknown } | undefined;
    if (last?.type === "function_call_result") {
      const out = last.output as string | { type: string; text?: string };
      this.seen.push(typeof out === "string" ? out : (out.text ?? JSON.stringify(out)));
    }
    const turn = this.turns[this.step];
    this.step += 1;
    const output = turn
      ? [
          {
            type: "function_call" as const,
            callId: `call_${this.step}_${Math.random().toString(36).slice(2, 8)}`,
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
    throw new Error("not streamed in these tests");
  }
}

function definitions(env: Env) {
  return [
    {
      name: "create_refund",
      description: "Refund a payment",
      parameters: z.object({ payment: z.string(), amount: z.number() }),
      execute: async (input: { payment: string; amount: number }, _ctx?: unknown, details?: { signal?: AbortSignal }) =>
        JSON.stringify(await env.provider.refund(input, "", details?.signal)),
    },
    {
      name: "refund_batch",
      description: "Refund several payments",
      parameters: z.object({ payments: z.array(z.string()) }),
      execute: async (input: { payments: string[] }) =>
        JSON.stringify(await env.provider.refundBatch(input.payments, "batch")),
    },
  ];
}

describe("@settle/openai-agents with run() (@openai/agents)", () => {
  let env: Env;
  beforeAll(async () => {
    env = await openEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  const runner = async (turns: Turn[], options: SettleOptions) => {
    const seen: string[] = [];
    const agent = new Agent({
      name: "refunds",
      instructions: "Refund.",
      model: new ScriptedModel(turns, seen),
      tools: withSettle(definitions(env), options),
    });
    await runAgent(agent, "Refund the customer.", { maxTurns: turns.length + 2 });
    return seen;
  };

  for (const [name, scenario] of Object.entries(sixFailures))
    it(`source article 002: ${name}`, async () => {
      await scenario(env, runner, `oa-${name}`);
    });

  it("needsApproval is backed by Settle: the run stops with an interruption that the console's approval resolves; one refund", async () => {
    const payment = "pay_oa_approval";
    const tools = withSettle(definitions(env), { settle: env.client(), taskId: "oa-approval", approvals: ["money"] });
    const seen: string[] = [];
    const agent = new Agent({
      name: "refunds",
      instructions: "Refund.",
      model: new ScriptedModel([{ tool: "create_refund", args: { payment, amount: 90 } }], seen),
      tools,
    });
    const first = await runAgent(agent, "Refund.", { maxTurns: 4 });
    expect(first.interruptions).toHaveLength(1);
    const [waiting] = await invocationsOf(env, "oa-approval");
    expect(waiting).toMatchObject({ status: "awaiting_approval" });
    expect(await settleInterruptions(tools, first)).toMatchObject({
      approved: 0,
      rejected: 0,
      pending: [first.interruptions[0]],
    });

    const detail = await env.client().getInvocation(waiting!.invocation_id);
    await actOnInvocation(
      env.t.db,
      { invocationId: waiting!.invocation_id },
      { action: "approve", note: "ok" },
      { actor: "ana@example.com", version: detail.version },
    );
    expect(await settleInterruptions(tools, first, { waitMs: 5_000 })).toMatchObject({ approved: 1, pending: [] });
    await runAgent(agent, first.state, { maxTurns: 4 });
    expect(JSON.parse(seen[0]!)).toMatchObject({ status: "succeeded" });
    expect(env.provider.effects(payment)).toBe(1);
    expect(await invocationsOf(env, "oa-approval")).toMatchObject([{ status: "succeeded" }]);
  });

  it("a rejection in Settle rejects the interruption; the model reads Settle's reason and nothing runs", async () => {
    const payment = "pay_oa_reject";
    const tools = withSettle(definitions(env), { settle: env.client(), taskId: "oa-reject", approvals: ["money"] });
    const seen: string[] = [];
    const agent = new Agent({
      name: "refunds",
      instructions: "Refund.",
      model: new ScriptedModel([{ tool: "create_refund", args: { payment, amount: 95 } }], seen),
      tools,
    });
    const first = await runAgent(agent, "Refund.", { maxTurns: 4 });
    const [waiting] = await waitFor(
      () => invocationsOf(env, "oa-reject"),
      (r) => r[0]?.status === "awaiting_approval",
    );
    const detail = await env.client().getInvocation(waiting!.invocation_id);
    await actOnInvocation(
      env.t.db,
      { invocationId: waiting!.invocation_id },
      { action: "reject", note: "no" },
      { actor: "ana@example.com", version: detail.version },
    );
    expect(await settleInterruptions(tools, first, { waitMs: 5_000 })).toMatchObject({ rejected: 1 });
    await runAgent(agent, first.state, { maxTurns: 4 });
    expect(seen[0]).toBe("Rejected by ana@example.com in Settle.");
    expect(env.provider.deliveries(payment)).toBe(0);
  });

  it("refuses a tool already built by tool(): its errors would reach Settle as a success", () => {
    const built = withSettle(definitions(env), { settle: env.client(), taskId: "x" })[0]!;
    expect(() => withSettle([built as never], { settle: env.client(), taskId: "x" })).toThrow(
      /not a tool already built/,
    );
  });
});
