import type { SettleClient } from "@settle/client";
import type { Shop } from "./fake-shop";
import { intentKey } from "./runtime";

// Seed 002's first failure at scale, with nobody left to probe: the agent process is killed mid-call (half the
// orders landed at the shop, half were lost before it), so all its log holds is an intent and an unknown outcome.
// The runtime's verifier worker looks each one up at the shop by its idempotency key when Settle asks; Settle
// settles each without a person. Needs create_order to have a verifier in Settle's tool catalog.

export type VerifiedRun = {
  cases: number;
  settledWithoutPerson: number;
  found: number;
  notFound: number;
  effects: number;
};

export async function reportKilledMidCall(settle: SettleClient, shop: Shop, runTag: string, cases: number) {
  const keys: string[] = [];
  const at = new Date().toISOString();
  for (let i = 0; i < cases; i += 1) {
    const task = `verify-${runTag}-${i}`;
    const key = intentKey(task, "agent-7", "create_order", "cart-1");
    keys.push(key);
    // The order landed before the connection died for even cases; odd ones never reached the shop.
    if (i % 2 === 0)
      await shop.createOrder(
        { sku: "sku-1", quantity: 1 },
        { idempotencyKey: key, signal: new AbortController().signal },
      );
    const base = {
      task_id: task,
      invocation_id: `${task}:${key}`,
      tool: "create_order",
      effect_class: "create" as const,
      idempotency_key: key,
      attempt: 1,
      at,
    };
    await settle.report([
      { ...base, event_id: `${task}:${key}:a1:intent`, phase: "intent" },
      {
        ...base,
        event_id: `${task}:${key}:a1:outcome`,
        phase: "outcome",
        envelope: {
          outcome: "unknown",
          effect_applied: "unknown",
          error: { code: "CONNECTION_RESET", message: "the agent process was killed mid-call" },
        },
      },
    ]);
  }
  await settle.flush();
  return keys.map((key, i) => ({ key, invocationId: `verify-${runTag}-${i}:${key}` }));
}

/** Serves Settle's asks with a lookup at the shop until every case is settled or `timeoutMs` passes. */
export async function verifyAtShop(
  settle: SettleClient,
  shop: Shop,
  cases: Array<{ key: string; invocationId: string }>,
  timeoutMs: number,
): Promise<VerifiedRun> {
  settle.verifier("create_order", (item) => {
    const order = shop.findByKey(item.idempotency_key ?? "");
    return order === undefined
      ? { found: false, evidence: `no order with key ${item.idempotency_key}` }
      : { found: true, evidence: `order ${(order as { id: string }).id}`, ref: (order as { id: string }).id };
  });
  const stop = new AbortController();
  let found = 0;
  let notFound = 0;
  const served = settle.serveVerifications({
    signal: stop.signal,
    waitS: 2,
    worker: "example-runtime",
    log: (e) => {
      if (e.kind !== "answered") return;
      if (e.answer.reading === "found") found += 1;
      if (e.answer.reading === "absent") notFound += 1;
    },
  });
  const deadline = Date.now() + timeoutMs;
  let settled = 0;
  while (Date.now() < deadline) {
    const decisions = await Promise.all(cases.map((c) => settle.getDecision(c.invocationId)));
    settled = decisions.filter((d) => d.status === "reconciled").length;
    if (settled === cases.length) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  stop.abort();
  await served;
  const effects = cases.reduce((n, c) => n + shop.effects(c.key), 0);
  return { cases: cases.length, settledWithoutPerson: settled, found, notFound, effects };
}

export function describeRun(run: VerifiedRun): string {
  const share = run.cases === 0 ? 0 : Math.round((run.settledWithoutPerson / run.cases) * 100);
  return `Settle settled ${run.settledWithoutPerson} of ${run.cases} killed-mid-call cases without a person (${share} %): ${run.found} found, ${run.notFound} not found; ${run.effects} orders at the shop.`;
}
