import { createHash } from "node:crypto";
import type { DecisionKind, EffectClass, SettleClient, ToolCall, ToolRun, ToolRunStatus } from "@settle/client";
import { classifyShop } from "./classify-shop";
import { type Shop, type ShopResponse } from "./fake-shop";

// An example agent runtime: every tool goes through the client's wrapTool,
// and each of source article 002's (docs/outcome-model.md) six failures is played against the fake shop. Each
// fixture says what it expects, so the same code serves the command line
// (main.ts) and the tests.

/** source article 002 (docs/outcome-model.md): the key is derived from the intent (task, actor, verb, target, slot), never from the payload. */
export function intentKey(taskId: string, actor: string, verb: string, target: string, slot = ""): string {
  return createHash("sha256").update(`${taskId}|${actor}|${verb}|${target}|${slot}`).digest("hex").slice(0, 32);
}

export type Expected = { runs: ToolRunStatus[]; calls: number[]; effects: number; decisions: DecisionKind[] };
export type FixtureResult = { name: string; runs: Array<ToolRun<ShopResponse>>; effects: number; expected: Expected };

export type RuntimeOptions = { runTag: string; actor?: string; decisionTimeoutMs?: number };

export function createAgentRuntime(settle: SettleClient, shop: Shop, options: RuntimeOptions) {
  const actor = options.actor ?? "agent-7";
  const taskId = (name: string) => `${name}-${options.runTag}`;

  /** One of the shop's operations as a governed tool: guard, intent, call, classify, report, probe, decide. */
  function tool<A>(
    op: (args: A, call: ToolCall) => Promise<ShopResponse>,
    spec: { tool: string; effectClass: EffectClass; task: string; key: string; timeoutMs?: number },
  ) {
    return settle.wrapTool(op, {
      tool: spec.tool,
      effectClass: spec.effectClass,
      taskId: spec.task,
      idempotencyKey: spec.key,
      classify: classifyShop,
      probe: async (key) => {
        const found = shop.findByKey(key);
        return found === undefined
          ? { found: false }
          : { found: true, value: { status: 200, headers: {}, body: found } };
      },
      ...(spec.timeoutMs ? { timeoutMs: spec.timeoutMs } : {}),
      ...(options.decisionTimeoutMs ? { decisionTimeoutMs: options.decisionTimeoutMs } : {}),
    });
  }

  /** 1. Kill mid-call: unknown, then a probe, then ok — found, or absent and retried with the same key. */
  async function killMidCall(lands: boolean): Promise<FixtureResult> {
    const task = taskId(lands ? "order-killed" : "order-lost");
    const key = intentKey(task, actor, "create_order", "cart-1");
    shop.inject(key, { kind: "kill_mid_call", lands });
    const createOrder = tool(shop.createOrder, { tool: "create_order", effectClass: "create", task, key });
    const run = await createOrder({ sku: "sku-1", quantity: 1 });
    return {
      name: lands ? "1. kill mid-call, the effect landed" : "1. kill mid-call, lost before the shop",
      runs: [run],
      effects: shop.effects(key),
      expected: { runs: ["done"], calls: [lands ? 1 : 2], effects: 1, decisions: ["do_not_retry"] },
    };
  }

  /** 2. Duplicate delivery: the network delivers the send twice, then the agent asks for it again. One message. */
  async function duplicateDelivery(): Promise<FixtureResult> {
    const task = taskId("notify");
    const key = intentKey(task, actor, "send_message", "customer-42", "notice-1");
    shop.inject(key, { kind: "duplicate_delivery" });
    const send = tool(shop.sendMessage, { tool: "send_message", effectClass: "send", task, key });
    const first = await send({ to: "customer-42", text: "Your order has shipped." });
    // The agent's own queue redelivers the step: the guard answers, the tool is not called.
    const again = await send({ to: "customer-42", text: "Your order has shipped." });
    return {
      name: "2. duplicate delivery",
      runs: [first, again],
      effects: shop.effects(key),
      expected: { runs: ["done", "done"], calls: [1, 0], effects: 1, decisions: ["do_not_retry", "do_not_retry"] },
    };
  }

  /** 3. 200 with an error body: never ok on the status alone. */
  async function errorBody200(): Promise<FixtureResult> {
    const task = taskId("order-bad-sku");
    const key = intentKey(task, actor, "create_order", "cart-2");
    const createOrder = tool(shop.createOrder, { tool: "create_order", effectClass: "create", task, key });
    const run = await createOrder({ sku: "sku-404", quantity: 1 });
    return {
      name: "3. 200 with an error body",
      runs: [run],
      effects: shop.effects(key),
      expected: { runs: ["needs_input"], calls: [1], effects: 0, decisions: ["correct_input"] },
    };
  }

  /** 4. Slow success: the charge lands at 29/30 of its budget; nothing races it. */
  async function slowSuccess(): Promise<FixtureResult> {
    const task = taskId("charge");
    const key = intentKey(task, actor, "charge_card", "invoice-9");
    const budgetMs = 1_500;
    shop.inject(key, { kind: "slow", ms: Math.round((budgetMs * 29) / 30) });
    const charge = tool(shop.chargeCard, { tool: "charge_card", effectClass: "money", task, key, timeoutMs: budgetMs });
    const run = await charge({ amountCents: 4_200 });
    return {
      name: "4. slow success",
      runs: [run],
      effects: shop.effects(key),
      expected: { runs: ["done"], calls: [1], effects: 1, decisions: ["do_not_retry"] },
    };
  }

  /** 5. Partial batch: per-item results, then a retry scoped to the rows that may still be written, under a new key. */
  async function partialBatch(): Promise<FixtureResult> {
    const task = taskId("sheet");
    const rows = ["row_11", "row_12", "row_13", "row_14", "row_15", "row_16"];
    const key = intentKey(task, actor, "write_rows", "sheet-1", "batch");
    const write = tool(shop.writeRows, { tool: "write_rows", effectClass: "create", task, key });
    const first = await write(rows);
    const items =
      (first.value?.body as { items?: Array<{ id: string; applied: string; retryable?: boolean }> } | undefined)
        ?.items ?? [];
    const remainder = items.filter((i) => i.applied === "no" && i.retryable).map((i) => i.id);
    const retryKey = intentKey(task, actor, "write_rows", "sheet-1", "retry-1");
    const second = await tool(shop.writeRows, { tool: "write_rows", effectClass: "create", task, key: retryKey })(
      remainder,
    );
    return {
      name: "5. partial batch",
      runs: [first, second],
      effects: rows.reduce((n, row) => n + shop.rowWrites(row), 0),
      expected: { runs: ["partial", "done"], calls: [1, 1], effects: 5, decisions: ["wait", "do_not_retry"] },
    };
  }

  /** 6. Rate limit with Retry-After: the next call waits for Settle's retry_allowed, which honours the header. */
  async function rateLimit(): Promise<FixtureResult> {
    const task = taskId("invoice");
    const key = intentKey(task, actor, "create_invoice", "customer-42");
    shop.inject(key, { kind: "rate_limit", retryAfterS: 1 });
    const createInvoice = tool(shop.createInvoice, { tool: "create_invoice", effectClass: "create", task, key });
    const run = await createInvoice({ customer: "customer-42", amountCents: 9_900 });
    return {
      name: "6. rate limit with Retry-After",
      runs: [run],
      effects: shop.effects(key),
      expected: { runs: ["done"], calls: [2], effects: 1, decisions: ["do_not_retry"] },
    };
  }

  return {
    killMidCall,
    duplicateDelivery,
    errorBody200,
    slowSuccess,
    partialBatch,
    rateLimit,
    /** Every fixture, one after another. */
    playAll: async () => [
      await killMidCall(true),
      await killMidCall(false),
      await duplicateDelivery(),
      await errorBody200(),
      await slowSuccess(),
      await partialBatch(),
      await rateLimit(),
    ],
  };
}

/** What differs from the fixture's expectation, given Settle's current decision on each run's invocation; empty when it passed. */
export async function checkFixture(settle: SettleClient, result: FixtureResult): Promise<string[]> {
  const problems: string[] = [];
  const { expected } = result;
  const statuses = result.runs.map((r) => r.status);
  const calls = result.runs.map((r) => r.calls);
  if (statuses.join() !== expected.runs.join())
    problems.push(`runs ended ${statuses.join(", ")}, expected ${expected.runs.join(", ")}`);
  if (calls.join() !== expected.calls.join())
    problems.push(`tool calls ${calls.join(", ")}, expected ${expected.calls.join(", ")}`);
  if (result.effects !== expected.effects)
    problems.push(`${result.effects} business effects, expected ${expected.effects}`);
  const decisions = await Promise.all(
    result.runs.map(async (r) => (await settle.getDecision(r.invocationId)).decision),
  );
  if (decisions.join() !== expected.decisions.join())
    problems.push(`Settle decided ${decisions.join(", ")}, expected ${expected.decisions.join(", ")}`);
  return problems;
}
