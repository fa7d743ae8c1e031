import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AIMessage, createAgent, fakeModel, tool, ToolMessage, toolRetryMiddleware } from "langchain";
import { z } from "zod";
import { settleMiddleware } from "@settle/langchain";
import { langchainAgent } from "@/examples/frameworks/agents";
import { actOnInvocation } from "@/lib/invocations/act";
import {
  approvedWithEdits,
  invocationsOf,
  openEnv,
  providerTools,
  rejectedWithReply,
  sixFailures,
  waitFor,
  type Env,
  type Turn,
} from "./kit";

// @settle/langchain through LangChain's own agent loop (createAgent) and its own
// fake tool-calling model, against a real Settle over HTTP — alone, and beside
// toolRetryMiddleware listed before and after it.

const runner = (env: Env, placement: "alone" | "before retry" | "after retry") =>
  langchainAgent(providerTools(env), placement);

describe("@settle/langchain with createAgent (langchain v1)", () => {
  let env: Env;
  beforeAll(async () => {
    env = await openEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  for (const [name, scenario] of Object.entries(sixFailures))
    it(`source article 002: ${name}`, async () => {
      await scenario(env, runner(env, "alone"), `lc-${name}`);
    });

  it("a call held for approval and approved with edits runs the tool with the approved arguments, once; nothing is flagged", async () => {
    await approvedWithEdits(env, runner(env, "alone"), "lc");
  });

  it("a rejection's reply is the ToolMessage the model reads; the refund never runs", async () => {
    await rejectedWithReply(env, runner(env, "alone"), "lc");
  });

  for (const placement of ["before retry", "after retry"] as const)
    it(`toolRetryMiddleware never re-runs an unknown write (Settle listed ${placement} it)`, async () => {
      const tag = placement.replace(" ", "-");
      const payment = `pay_lc_retry_${tag}`;
      env.provider.inject(payment, "lost");
      const turns: Turn[] = [{ tool: "create_refund", args: { payment, amount: 5 } }];
      const seen = await runner(env, placement)(turns, {
        settle: env.client(),
        taskId: `lc-retry-${tag}`,
        timeoutMs: 300,
      });
      expect(seen[0]).toMatch(
        /^(Unknown outcome: create_refund failed after it was sent|Not run: an identical create_refund call \d+ s ago has an unknown outcome)/,
      );
      expect(env.provider.deliveries(payment)).toBe(1);
    });

  it("a write that failed before anything happened is retried by toolRetryMiddleware, through Settle's guard, once it may be", async () => {
    let calls = 0;
    const flaky = tool(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error("connection refused");
        return JSON.stringify({ id: "note_1" });
      },
      { name: "add_note", description: "Add a note", schema: z.object({ text: z.string() }) },
    );
    const model = fakeModel()
      .respondWithTools([{ name: "add_note", args: { text: "hi" }, id: "call_note" }])
      .respond(new AIMessage("done"));
    // The team's classifier knows "connection refused" means nothing was sent: not committed, so a retry is safe.
    const settle = settleMiddleware({
      settle: env.client(),
      taskId: "lc-flaky",
      effects: { add_note: "create" },
      classify: (r) =>
        r.kind === "threw"
          ? { outcome: "retryable", effect_applied: "no", message: "connection refused" }
          : { outcome: "ok", effect_applied: "yes" },
    });
    const agent = createAgent({
      model,
      tools: [flaky],
      middleware: [toolRetryMiddleware({ maxRetries: 2, initialDelayMs: 10 }), settle],
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "note" }] });
    expect(calls).toBe(2);
    expect(result.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => m.content)).toEqual([
      JSON.stringify({ id: "note_1" }),
    ]);
  });

  it("a tool's own ToolMessage with status error is a failure to Settle: unknown for a write, so its retry is refused", async () => {
    const handled = tool(
      async (_args, config) =>
        new ToolMessage({ content: "gateway timeout", tool_call_id: config.toolCall?.id ?? "", status: "error" }),
      { name: "send_invoice", description: "Send", schema: z.object({ to: z.string() }) },
    );
    const model = fakeModel()
      .respondWithTools([{ name: "send_invoice", args: { to: "a@example.com" }, id: "c1" }])
      .respondWithTools([{ name: "send_invoice", args: { to: "a@example.com" }, id: "c2" }])
      .respond(new AIMessage("done"));
    const agent = createAgent({
      model,
      tools: [handled],
      middleware: [settleMiddleware({ settle: env.client(), taskId: "lc-handled", effects: { send_invoice: "send" } })],
    });
    const result = await agent.invoke({ messages: [{ role: "user", content: "send" }] });
    const seen = result.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => m.content);
    expect(seen[0]).toBe("gateway timeout");
    expect(seen[1]).toMatch(
      /^Not run: an identical send_invoice call \d+ s ago has an unknown outcome; Settle is checking it\. Do not retry\.$/,
    );
    const [row] = await env.t.db.driver.query<{ status: string }>(
      `SELECT status FROM invocations WHERE task_id = 'lc-handled'`,
    );
    expect(row).toMatchObject({ status: "outcome_unknown" });
  });
  it("a call that needs approval is answered 'awaits approval' until a person approves it in Settle; then it runs once", async () => {
    const payment = "pay_lc_approval";
    const turns: Turn[] = [{ tool: "create_refund", args: { payment, amount: 60 } }];
    const options = { settle: env.client(), taskId: "lc-approval", approvals: ["money" as const] };
    const [held] = await runner(env, "alone")(turns, options);
    expect(held).toBe(
      "Not run yet: create_refund needs a person's approval in Settle. Tell the user it awaits approval; call it again once it is approved.",
    );
    const [waiting] = await invocationsOf(env, "lc-approval");
    expect(waiting).toMatchObject({ status: "awaiting_approval" });
    expect(env.provider.deliveries(payment)).toBe(0);
    const detail = await env.client().getInvocation(waiting!.invocation_id);
    const approved = await actOnInvocation(
      env.t.db,
      { invocationId: waiting!.invocation_id },
      { action: "approve", note: "ok" },
      { actor: "ana@example.com", version: detail.version },
    );
    expect(approved.ok).toBe(true);
    const [ran] = await runner(env, "alone")(turns, options);
    expect(JSON.parse(ran!)).toMatchObject({ status: "succeeded", amount: 60 });
    const [again] = await runner(env, "alone")(turns, options);
    expect(again).toMatch(/^Not run: an identical create_refund call \d+ s ago already took effect\./);
    expect(env.provider.effects(payment)).toBe(1);
  });
  it("with approvalWaitMs the call waits for the console's decision and runs once it is approved", async () => {
    const payment = "pay_lc_hold";
    const turns: Turn[] = [{ tool: "create_refund", args: { payment, amount: 61 } }];
    const running = runner(env, "alone")(turns, {
      settle: env.client(),
      taskId: "lc-hold",
      approvals: ["money"],
      approvalWaitMs: 30_000,
    });
    const [waiting] = await waitFor(
      () => invocationsOf(env, "lc-hold"),
      (r) => r[0]?.status === "awaiting_approval",
    );
    expect(env.provider.deliveries(payment)).toBe(0);
    const detail = await env.client().getInvocation(waiting!.invocation_id);
    await actOnInvocation(
      env.t.db,
      { invocationId: waiting!.invocation_id },
      { action: "approve", note: "ok" },
      { actor: "ana@example.com", version: detail.version },
    );
    const [ran] = await running;
    expect(JSON.parse(ran!)).toMatchObject({ status: "succeeded", amount: 61 });
    expect(env.provider.effects(payment)).toBe(1);
    expect(await invocationsOf(env, "lc-hold")).toMatchObject([{ status: "succeeded", commit_state: "committed" }]);
  });
});
