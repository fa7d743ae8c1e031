import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateText, stepCountIs, tool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { settleApprovals, withSettle } from "@settle/ai-sdk";
import { actOnInvocation } from "@/lib/invocations/act";
import { invocationsOf, openEnv, sixFailures, waitFor, type Env, type RunAgent, type Turn } from "./kit";

// @settle/ai-sdk through the AI SDK's own agent loop (generateText with tools and
// stopWhen) and its own mock model, against a real Settle over HTTP.

const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } } as never;

/** A model that asks for one tool call per step, in order, then answers; it records the tool results it was shown. */
function scriptedModel(turns: Turn[], seen: string[]) {
  let step = 0;
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      if (last?.role === "tool")
        for (const part of last.content)
          if (part.type === "tool-result") {
            const out = part.output as { type: string; value?: unknown; reason?: string };
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
          {
            type: "tool-call",
            toolCallId: `call_${step}_${Math.random().toString(36).slice(2, 8)}`,
            toolName: turn.tool,
            input: JSON.stringify(turn.args),
          },
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

function refundTools(env: Env) {
  return {
    create_refund: tool({
      description: "Refund a payment",
      inputSchema: z.object({ payment: z.string(), amount: z.number() }),
      execute: ({ payment, amount }, { abortSignal, toolCallId }) =>
        env.provider.refund({ payment, amount }, toolCallId, abortSignal),
    }),
    refund_batch: tool({
      description: "Refund several payments",
      inputSchema: z.object({ payments: z.array(z.string()) }),
      execute: ({ payments }, { toolCallId }) => env.provider.refundBatch(payments, toolCallId),
    }),
  };
}

describe("@settle/ai-sdk with generateText (ai 7)", () => {
  let env: Env;
  beforeAll(async () => {
    env = await openEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  const run: RunAgent = async (turns, options) => {
    const seen: string[] = [];
    await generateText({
      model: scriptedModel(turns, seen),
      tools: withSettle(refundTools(env), options),
      prompt: "Refund the customer.",
      stopWhen: stepCountIs(turns.length + 1),
      maxRetries: 3,
    });
    return seen;
  };

  for (const [name, scenario] of Object.entries(sixFailures))
    it(`source article 002: ${name}`, async () => {
      await scenario(env, run, `ai-${name}`);
    });

  it("a tool that throws after sending is run once: maxRetries retries the model, never the unknown write", async () => {
    const payment = "pay_ai_throw";
    env.provider.inject(payment, "lost");
    const seen = await run([{ tool: "create_refund", args: { payment, amount: 1 } }], {
      settle: env.client(),
      taskId: "ai-throw",
      timeoutMs: 300,
    });
    expect(seen[0]).toMatch(/^Unknown outcome: create_refund failed after it was sent/);
    expect(env.provider.deliveries(payment)).toBe(1);
  });

  it("needsApproval is answered by Settle: the request waits in the console, an approval there runs the refund once", async () => {
    const payment = "pay_ai_approval";
    const options = { settle: env.client(), taskId: "ai-approval", approvals: ["money" as const] };
    const tools = withSettle(refundTools(env), options);
    const messages: ModelMessage[] = [{ role: "user", content: "Refund pay_ai_approval." }];
    const seen: string[] = [];
    const first = await generateText({
      model: scriptedModel([{ tool: "create_refund", args: { payment, amount: 70 } }], seen),
      tools,
      messages,
      stopWhen: stepCountIs(3),
    });
    const requests = first.content.filter((p) => p.type === "tool-approval-request");
    expect(requests).toHaveLength(1);
    expect(env.provider.deliveries(payment)).toBe(0);
    const [waiting] = await invocationsOf(env, "ai-approval");
    expect(waiting).toMatchObject({ status: "awaiting_approval" });
    const still = await settleApprovals(tools, first.content);
    expect(still).toEqual({ message: null, pending: [requests[0]!.approvalId] });

    const detail = await env.client().getInvocation(waiting!.invocation_id);
    const approved = await actOnInvocation(
      env.t.db,
      { invocationId: waiting!.invocation_id },
      { action: "approve", note: "ok" },
      { actor: "ana@example.com", version: detail.version },
    );
    expect(approved.ok).toBe(true);
    const decided = await settleApprovals(tools, first.content, { waitMs: 5_000 });
    expect(decided.message).toMatchObject({
      role: "tool",
      content: [{ type: "tool-approval-response", approved: true }],
    });
    await generateText({
      model: scriptedModel([], seen),
      tools,
      messages: [...messages, ...first.response.messages, decided.message!],
      stopWhen: stepCountIs(2),
    });
    expect(env.provider.effects(payment)).toBe(1);
    expect(await invocationsOf(env, "ai-approval")).toMatchObject([{ status: "succeeded", commit_state: "committed" }]);
  });

  it("a rejection in Settle reaches the model as the denial's reason, and the refund never runs", async () => {
    const payment = "pay_ai_reject";
    const tools = withSettle(refundTools(env), { settle: env.client(), taskId: "ai-reject", approvals: ["money"] });
    const first = await generateText({
      model: scriptedModel([{ tool: "create_refund", args: { payment, amount: 80 } }], []),
      tools,
      prompt: "Refund.",
      stopWhen: stepCountIs(3),
    });
    const [waiting] = await waitFor(
      () => invocationsOf(env, "ai-reject"),
      (r) => r[0]?.status === "awaiting_approval",
    );
    const detail = await env.client().getInvocation(waiting!.invocation_id);
    await actOnInvocation(
      env.t.db,
      { invocationId: waiting!.invocation_id },
      { action: "reject", note: "too much" },
      { actor: "ana@example.com", version: detail.version },
    );
    const decided = await settleApprovals(tools, first.content, { waitMs: 5_000 });
    expect(decided.message).toMatchObject({
      content: [{ approved: false, reason: "Rejected by ana@example.com in Settle." }],
    });
    expect(env.provider.deliveries(payment)).toBe(0);
  });
});
