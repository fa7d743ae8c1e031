import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, run as runAgent, setTracingDisabled } from "@openai/agents";
import { settleInterruptions, withSettle } from "@settle/openai-agents";
import { agentsDefinitions, openaiAgentsAgent, ScriptedModel } from "@/examples/frameworks/agents";
import { actOnInvocation } from "@/lib/invocations/act";
import { decideWhenHeld, invocationsOf, openEnv, providerTools, sixFailures, waitFor, type Env } from "./kit";

// @settle/openai-agents through the Agents SDK's own run loop (run(agent, …))
// with a custom Model, against a real Settle over HTTP.

setTracingDisabled(true);

describe("@settle/openai-agents with run() (@openai/agents)", () => {
  let env: Env;
  beforeAll(async () => {
    env = await openEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  const runner = (
    turns: Parameters<ReturnType<typeof openaiAgentsAgent>>[0],
    options: Parameters<ReturnType<typeof openaiAgentsAgent>>[1],
  ) => openaiAgentsAgent(providerTools(env))(turns, options);

  for (const [name, scenario] of Object.entries(sixFailures))
    it(`source article 002: ${name}`, async () => {
      await scenario(env, runner, `oa-${name}`);
    });

  it("needsApproval is backed by Settle: the run stops with an interruption that the console's approval resolves; one refund", async () => {
    const payment = "pay_oa_approval";
    const tools = withSettle(agentsDefinitions(providerTools(env)), {
      settle: env.client(),
      taskId: "oa-approval",
      approvals: ["money"],
    });
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
    const tools = withSettle(agentsDefinitions(providerTools(env)), {
      settle: env.client(),
      taskId: "oa-reject",
      approvals: ["money"],
    });
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

  it("approved with edits in Settle: the resumed run refunds the edited amount once; a rejection's reply is the model's message", async () => {
    const payment = "pay_oa_edit";
    const tools = withSettle(agentsDefinitions(providerTools(env)), {
      settle: env.client(),
      taskId: "oa-edit",
      approvals: ["money"],
    });
    const seen: string[] = [];
    const agent = new Agent({
      name: "refunds",
      instructions: "Refund.",
      model: new ScriptedModel([{ tool: "create_refund", args: { payment, amount: 90 } }], seen),
      tools,
    });
    const first = await runAgent(agent, "Refund.", { maxTurns: 4 });
    const edited = { payment, amount: 45 };
    const id = await decideWhenHeld(env, "oa-edit", { action: "approve", arguments: edited });
    expect(await settleInterruptions(tools, first, { waitMs: 5_000 })).toMatchObject({ approved: 1, pending: [] });
    await runAgent(agent, first.state, { maxTurns: 4 });
    expect(JSON.parse(seen[0]!)).toMatchObject({ status: "succeeded", amount: 45 });
    expect(env.provider.effects(payment)).toBe(1);
    expect(await env.client().getInvocation(id)).toMatchObject({ ran_with_other_arguments: false });

    const replied = withSettle(agentsDefinitions(providerTools(env)), {
      settle: env.client(),
      taskId: "oa-reply",
      approvals: ["money"],
    });
    const heard: string[] = [];
    const asking = new Agent({
      name: "refunds",
      instructions: "Refund.",
      model: new ScriptedModel([{ tool: "create_refund", args: { payment: "pay_oa_reply", amount: 90 } }], heard),
      tools: replied,
    });
    const held = await runAgent(asking, "Refund.", { maxTurns: 4 });
    const reply = "Refund at most 50 EUR; ask the customer";
    await decideWhenHeld(env, "oa-reply", { action: "reject", reply });
    expect(await settleInterruptions(replied, held, { waitMs: 5_000 })).toMatchObject({ rejected: 1 });
    await runAgent(asking, held.state, { maxTurns: 4 });
    expect(heard[0]).toBe(`Rejected by ana@example.com in Settle. They said: "${reply}"`);
    expect(env.provider.deliveries("pay_oa_reply")).toBe(0);
  });

  it("refuses a tool already built by tool(): its errors would reach Settle as a success", () => {
    const built = withSettle(agentsDefinitions(providerTools(env)), { settle: env.client(), taskId: "x" })[0]!;
    expect(() => withSettle([built as never], { settle: env.client(), taskId: "x" })).toThrow(
      /not a tool already built/,
    );
  });
});
