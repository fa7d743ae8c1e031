import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSettleClient, type SettleClient, type ToolRun } from "@settle/client";
import { actOnInvocation } from "@/lib/invocations/act";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { runVerifications } from "@/lib/verify/schedule";
import { call, openSettle, type Backend, type TestContext } from "@/tests/integration/harness";
import { routeFetch } from "@/tests/integration/route-fetch";
import { getInvocation } from "@/tests/integration/routes";
import { createShop, type Shop } from "./fake-shop";
import { checkFixture, createAgentRuntime, intentKey, type FixtureResult } from "./runtime";
import { describeRun, reportKilledMidCall, verifyAtShop } from "./verifier";

// The example runtime against Settle's real route handlers and database:
// each of source article 002's (docs/outcome-model.md) six failures reaches the decision it should, with one
// business effect per intent and no tool call repeated before Settle allowed it.

type Event = { kind: "decision"; invocation: string; decision: string } | { kind: "call"; key: string; at: number };

describe.each<Backend>(["postgres", "pglite"])("example agent runtime on %s", (backend) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle(backend);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  /** A client whose requests go to the route handlers, and one timeline of the decisions it read and the tool calls made. */
  function setup(): { settle: SettleClient; shop: Shop; timeline: Event[] } {
    const timeline: Event[] = [];
    const settle = createSettleClient({
      url: "http://settle.test",
      key: t.key,
      fetch: async (input, init) => {
        const res = await routeFetch(input, init);
        if (new URL(input).pathname.endsWith("/decision") && res.status === 200) {
          const body = (await res.clone().json()) as { invocation_id: string; decision: string };
          timeline.push({ kind: "decision", invocation: body.invocation_id, decision: body.decision });
        }
        return res;
      },
    });
    const shop = createShop({ onCall: (d) => timeline.push({ kind: "call", key: d.key, at: d.at }) });
    return { settle, shop, timeline };
  }

  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;

  /** Every call of a key after its first must follow a decision that allowed it, one call per allowance. */
  function callsWithoutDecision(timeline: Event[], runs: Array<ToolRun<unknown>>): string[] {
    const invocationOf = new Map(runs.map((r) => [r.idempotencyKey, r.invocationId]));
    const allowed = new Set<string>();
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const e of timeline) {
      if (e.kind === "decision") {
        if (e.decision === "retry_allowed" || e.decision === "proceed") allowed.add(e.invocation);
        continue;
      }
      const invocation = invocationOf.get(e.key) ?? e.key;
      if (seen.has(e.key) && !allowed.has(invocation))
        problems.push(`${invocation} called again without a decision allowing it`);
      seen.add(e.key);
      allowed.delete(invocation);
    }
    return problems;
  }

  let results: FixtureResult[] = [];
  let timeline: Event[] = [];

  it("plays the six fixtures: each reaches its decision, one effect per intent, no call repeated before a decision", async () => {
    const { settle, shop, timeline: events } = setup();
    results = await createAgentRuntime(settle, shop, { runTag: backend, decisionTimeoutMs: 10_000 }).playAll();
    timeline = events;
    for (const result of results)
      expect({ fixture: result.name, problems: await checkFixture(settle, result) }).toEqual({
        fixture: result.name,
        problems: [],
      });
    expect(
      callsWithoutDecision(
        timeline,
        results.flatMap((r) => r.runs),
      ),
    ).toEqual([]);
    // One business effect per intent: no key was ever applied twice.
    for (const run of results.flatMap((r) => r.runs)) expect(shop.effects(run.idempotencyKey)).toBeLessThanOrEqual(1);
  });

  it("Settle's record of each fixture: statuses, the probe's settlement, the scoped retry and the honoured Retry-After", async () => {
    const byName = (prefix: string) => results.find((r) => r.name.startsWith(prefix))!;
    const [landed, lost] = results.filter((r) => r.name.startsWith("1."));
    expect(await read(landed!.runs[0]!.invocationId)).toMatchObject({
      status: "reconciled",
      commit_state: "committed",
      resolution: { by: "probe" },
      attempt_count: 1,
    });
    expect(await read(lost!.runs[0]!.invocationId)).toMatchObject({ status: "succeeded", attempt_count: 2 });

    const duplicate = byName("2.");
    expect(duplicate.runs[0]!.invocationId).toBe(duplicate.runs[1]!.invocationId);
    expect(await read(duplicate.runs[0]!.invocationId)).toMatchObject({ status: "succeeded", attempt_count: 1 });

    expect(await read(byName("3.").runs[0]!.invocationId)).toMatchObject({
      status: "needs_input",
      commit_state: "not_committed",
    });
    expect(await read(byName("4.").runs[0]!.invocationId)).toMatchObject({
      status: "succeeded",
      effect_class: "money",
      attempt_count: 1,
    });

    const partial = byName("5.");
    const first = await read(partial.runs[0]!.invocationId);
    expect(first).toMatchObject({ status: "partially_applied", commit_state: "partial" });
    expect(
      first.attempts.at(-1).items.map((i: { item_id: string; applied: string }) => `${i.item_id}:${i.applied}`),
    ).toEqual(["row_11:yes", "row_12:yes", "row_13:no", "row_14:yes", "row_15:no", "row_16:yes"]);
    const retry = await read(partial.runs[1]!.invocationId);
    expect(retry.attempts.at(-1).items.map((i: { item_id: string }) => i.item_id)).toEqual(["row_15"]);

    const rate = byName("6.");
    const calls = timeline.filter(
      (e): e is Extract<Event, { kind: "call" }> => e.kind === "call" && e.key === rate.runs[0]!.idempotencyKey,
    );
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1_000);
  });

  it("two workers given the same intent at once: one calls, the other waits for its outcome; one effect", async () => {
    const { settle, shop, timeline } = setup();
    const worker2 = createSettleClient({ url: "http://settle.test", key: t.key, fetch: routeFetch });
    const task = `two-workers-${backend}`;
    const key = intentKey(task, "agent-7", "create_invoice", "customer-3");
    shop.inject(key, { kind: "slow", ms: 300 });
    const spec = {
      tool: "create_invoice",
      effectClass: "create" as const,
      taskId: task,
      idempotencyKey: key,
      decisionTimeoutMs: 10_000,
    };
    const runs = await Promise.all(
      [settle.wrapTool(shop.createInvoice, spec), worker2.wrapTool(shop.createInvoice, spec)].map((run) =>
        run({ customer: "customer-3", amountCents: 100 }),
      ),
    );
    expect(runs.map((r) => r.status)).toEqual(["done", "done"]);
    expect(runs.map((r) => r.calls).sort()).toEqual([0, 1]);
    expect(shop.effects(key)).toBe(1);
    expect(callsWithoutDecision(timeline, runs)).toEqual([]);
  });

  it("an unknown outcome with no probe waits for a person: reconciled as not committed, it is called again with the same key", async () => {
    const { settle, shop, timeline } = setup();
    const task = `no-probe-${backend}`;
    const key = intentKey(task, "agent-7", "create_order", "cart-9");
    shop.inject(key, { kind: "kill_mid_call", lands: false });
    const keys: string[] = [];
    const createOrder = settle.wrapTool(
      (order: { sku: string; quantity: number }, c) => {
        keys.push(c.idempotencyKey);
        return shop.createOrder(order, c);
      },
      { tool: "create_order", effectClass: "create", taskId: task, idempotencyKey: key, decisionTimeoutMs: 20_000 },
    );
    const running = createOrder({ sku: "sku-2", quantity: 3 });
    const id = `${task}:${key}`;
    const unknown = await waitFor(
      () => read(id),
      (inv) => inv?.status === "outcome_unknown",
    );
    expect(keys).toHaveLength(1);
    const settled = await actOnInvocation(
      t.db,
      { invocationId: id },
      { action: "mark_reconciled", commit_state: "not_committed", note: "no order in the shop" },
      { actor: "ana@example.com", version: unknown.version },
    );
    expect(settled.ok).toBe(true);
    const run = await running;
    expect(run).toMatchObject({ status: "done", calls: 2, decision: { decision: "do_not_retry" } });
    expect(keys).toEqual([key, key]);
    expect(callsWithoutDecision(timeline, [run])).toEqual([]);
    expect(shop.effects(key)).toBe(1);
  });

  it("an operator who finds the effect settles it committed: no second call", async () => {
    const { settle, shop } = setup();
    const task = `found-${backend}`;
    const key = intentKey(task, "agent-7", "send_message", "customer-7");
    shop.inject(key, { kind: "kill_mid_call", lands: true });
    const send = settle.wrapTool(shop.sendMessage, {
      tool: "send_message",
      effectClass: "send",
      taskId: task,
      idempotencyKey: key,
      decisionTimeoutMs: 20_000,
    });
    const running = send({ to: "customer-7", text: "Refund issued." });
    const id = `${task}:${key}`;
    await waitFor(
      () => read(id),
      (inv) => inv?.status === "outcome_unknown",
    );
    const asked = await actOnInvocation(
      t.db,
      { invocationId: id },
      { action: "request_verification" },
      { actor: "ana@example.com", version: (await read(id)).version },
    );
    expect(asked.ok).toBe(true);
    const found = await actOnInvocation(
      t.db,
      { invocationId: id },
      { action: "record_verification", result: "found", evidence: "message msg_1 in the outbox" },
      { actor: "ana@example.com", version: (await read(id)).version },
    );
    expect(found.ok).toBe(true);
    expect(await running).toMatchObject({
      status: "done",
      calls: 1,
      decision: { decision: "do_not_retry", status: "reconciled" },
    });
    expect(shop.deliveries(key)).toHaveLength(1);
  });

  it("a verifier at the shop settles every killed-mid-call case without a person, and no order twice", async () => {
    const { settle, shop } = setup();
    await addToolCatalogEntry(
      t.db,
      {
        runtime: t.runtime,
        pattern: "create_order",
        effect_class: "create",
        verify: { after_s: 1, every_s: 5, max_tries: 3, absent_after_s: 1, lease_s: 30 },
      },
      "admin@example.com",
    );
    const cases = await reportKilledMidCall(settle, shop, "vt", 10);
    // Settle's job, as the server runs it every few seconds.
    const jobs = setInterval(() => void runVerifications(t.db, new Date()).catch(() => {}), 300);
    try {
      const run = await verifyAtShop(settle, shop, cases, 20_000);
      console.log(describeRun(run));
      expect(run).toEqual({ cases: 10, settledWithoutPerson: 10, found: 5, notFound: 5, effects: 5 });
    } finally {
      clearInterval(jobs);
    }
    expect(await read(cases[0]!.invocationId)).toMatchObject({ status: "reconciled", commit_state: "committed" });
    expect(await read(cases[1]!.invocationId)).toMatchObject({ status: "reconciled", commit_state: "not_committed" });
  });
});

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
