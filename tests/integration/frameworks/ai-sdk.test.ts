import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateText, simulateReadableStream, stepCountIs, streamText, ToolLoopAgent, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { settleApprovals, withSettle } from "@settle/ai-sdk";
import { aiSdkAgent, aiSdkModel, aiSdkTools } from "@/examples/frameworks/agents";
import { actOnInvocation } from "@/lib/invocations/act";
import {
  decideWhenHeld,
  invocationsOf,
  openEnv,
  providerTools,
  sixFailures,
  waitFor,
  type Env,
  type RunAgent,
} from "./kit";

// @settle/ai-sdk through the AI SDK's own agent loop (generateText with tools and
// stopWhen) and its own mock model, against a real Settle over HTTP.

describe("@settle/ai-sdk with generateText (ai 7)", () => {
  let env: Env;
  beforeAll(async () => {
    env = await openEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  const run: RunAgent = (turns, options) => aiSdkAgent(providerTools(env))(turns, options);

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
    const tools = withSettle(aiSdkTools(providerTools(env)), options);
    const messages: ModelMessage[] = [{ role: "user", content: "Refund pay_ai_approval." }];
    const seen: string[] = [];
    const first = await generateText({
      model: aiSdkModel([{ tool: "create_refund", args: { payment, amount: 70 } }], seen),
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
      model: aiSdkModel([], seen),
      tools,
      messages: [...messages, ...first.response.messages, decided.message!],
      stopWhen: stepCountIs(2),
    });
    expect(env.provider.effects(payment)).toBe(1);
    expect(await invocationsOf(env, "ai-approval")).toMatchObject([{ status: "succeeded", commit_state: "committed" }]);
  });

  it("approved with edits in Settle: the approved refund runs once with the edited amount; nothing is flagged", async () => {
    const payment = "pay_ai_edit";
    const tools = withSettle(aiSdkTools(providerTools(env)), {
      settle: env.client(),
      taskId: "ai-edit",
      approvals: ["money"],
    });
    const messages: ModelMessage[] = [{ role: "user", content: "Refund pay_ai_edit." }];
    const seen: string[] = [];
    const first = await generateText({
      model: aiSdkModel([{ tool: "create_refund", args: { payment, amount: 70 } }], seen),
      tools,
      messages,
      stopWhen: stepCountIs(3),
    });
    const edited = { payment, amount: 35 };
    const id = await decideWhenHeld(env, "ai-edit", { action: "approve", arguments: edited });
    const decided = await settleApprovals(tools, first.content, { waitMs: 5_000 });
    expect(decided.message).toMatchObject({ content: [{ type: "tool-approval-response", approved: true }] });
    await generateText({
      model: aiSdkModel([], seen),
      tools,
      messages: [...messages, ...first.response.messages, decided.message!],
      stopWhen: stepCountIs(2),
    });
    expect(JSON.parse(seen[0]!)).toMatchObject({ status: "succeeded", amount: 35 });
    expect(env.provider.effects(payment)).toBe(1);
    expect(await env.client().getInvocation(id)).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_edit: { state: "approved", arguments: edited },
    });
  });

  it("a rejection's reply in Settle is quoted in the denial's reason the model reads", async () => {
    const tools = withSettle(aiSdkTools(providerTools(env)), {
      settle: env.client(),
      taskId: "ai-reply",
      approvals: ["money"],
    });
    const first = await generateText({
      model: aiSdkModel([{ tool: "create_refund", args: { payment: "pay_ai_reply", amount: 80 } }], []),
      tools,
      prompt: "Refund.",
      stopWhen: stepCountIs(3),
    });
    const reply = "Refund at most 50 EUR; ask the customer";
    await decideWhenHeld(env, "ai-reply", { action: "reject", reply });
    const decided = await settleApprovals(tools, first.content, { waitMs: 5_000 });
    expect(decided.message).toMatchObject({
      content: [{ approved: false, reason: `Rejected by ana@example.com in Settle. They said: "${reply}"` }],
    });
    expect(env.provider.deliveries("pay_ai_reply")).toBe(0);
  });

  it("a rejection in Settle reaches the model as the denial's reason, and the refund never runs", async () => {
    const payment = "pay_ai_reject";
    const tools = withSettle(aiSdkTools(providerTools(env)), {
      settle: env.client(),
      taskId: "ai-reject",
      approvals: ["money"],
    });
    const first = await generateText({
      model: aiSdkModel([{ tool: "create_refund", args: { payment, amount: 80 } }], []),
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
  it("the probe option: an earlier call's unknown outcome is looked up first; absent, the same call runs again once", async () => {
    const payment = "pay_ai_probe";
    env.provider.inject(payment, "lost");
    const probed: string[] = [];
    const options = {
      settle: env.client(),
      taskId: "ai-probe",
      timeoutMs: 300,
      probe: async ({ args }: { args: unknown }) => {
        const p = (args as { payment: string }).payment;
        probed.push(p);
        return { found: env.provider.findRefund(p) !== undefined };
      },
    };
    const seen = await run(
      [
        { tool: "create_refund", args: { payment, amount: 9 } },
        { tool: "create_refund", args: { payment, amount: 9 } },
      ],
      options,
    );
    expect(seen[0]).toMatch(/^Unknown outcome: create_refund failed after it was sent/);
    expect(JSON.parse(seen[1]!)).toMatchObject({ status: "succeeded" });
    expect(probed).toEqual([payment]);
    expect({ effects: env.provider.effects(payment), deliveries: env.provider.deliveries(payment) }).toEqual({
      effects: 1,
      deliveries: 2,
    });
    expect(await invocationsOf(env, "ai-probe")).toMatchObject([{ status: "succeeded", commit_state: "committed" }]);
  });
  it("the same ToolSet in the Agent class (ToolLoopAgent): a duplicate under a new key is refused, one refund", async () => {
    const agentRun: RunAgent = async (turns, options) => {
      const seen: string[] = [];
      const agent = new ToolLoopAgent({
        model: aiSdkModel(turns, seen),
        tools: withSettle(aiSdkTools(providerTools(env)), options),
        stopWhen: stepCountIs(turns.length + 1),
      });
      await agent.generate({ prompt: "Refund the customer." });
      return seen;
    };
    await sixFailures.duplicateNewKey(env, agentRun, "ai-agent-class");
  });
  it("the same ToolSet with streamText: an unknown write's retry is refused in the stream, one delivery", async () => {
    const payment = "pay_ai_stream";
    env.provider.inject(payment, "lost");
    const finish = (unified: string) => ({
      type: "finish" as const,
      finishReason: { unified, raw: undefined },
      usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
    });
    let step = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => {
        step += 1;
        const chunks =
          step <= 2
            ? [
                {
                  type: "tool-call",
                  toolCallId: `s${step}`,
                  toolName: "create_refund",
                  input: JSON.stringify({ payment, amount: 3 }),
                },
                finish("tool-calls"),
              ]
            : [
                { type: "text-start", id: "t" },
                { type: "text-delta", id: "t", delta: "done" },
                { type: "text-end", id: "t" },
                finish("stop"),
              ];
        return { stream: simulateReadableStream({ chunks: chunks as never[] }) };
      },
    });
    const result = streamText({
      model,
      tools: withSettle(aiSdkTools(providerTools(env)), { settle: env.client(), taskId: "ai-stream", timeoutMs: 300 }),
      prompt: "Refund.",
      stopWhen: stepCountIs(3),
    });
    const outputs: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === "tool-result") outputs.push(part.output);
    expect(outputs[0]).toMatch(/^Unknown outcome: create_refund failed after it was sent/);
    expect(outputs[1]).toMatch(
      /^Not run: an identical create_refund call \d+ s ago has an unknown outcome; Settle is checking it\. Do not retry\.$/,
    );
    expect(env.provider.deliveries(payment)).toBe(1);
  });
});
