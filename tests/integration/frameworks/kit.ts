import { expect } from "vitest";
import { createSettleClient, type EffectClass, type SettleClient } from "@settle/client";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { actOnInvocation } from "@/lib/invocations/act";
import type { OperatorAction } from "@/lib/outcome/actions";
import { runVerifications } from "@/lib/verify/schedule";
import { openSettle, type TestContext } from "@/tests/integration/harness";
import { startServer, type TestServer } from "@/tests/integration/http-server";
import type { RefundTools, Turn } from "@/examples/frameworks/agents";
import { createProvider, LOCKED, MERGED, type Provider } from "./provider";

// Source article 002's failures, played through a framework's own agent loop
// (its own mock model) against a real Settle over HTTP: each framework's test
// supplies `run` — a model that asks for the given tool calls one per step —
// and these scenarios check what the model saw, the state Settle reached, and
// that the fake provider applied each refund exactly once.

export type { Turn };
export type AgentOptions = {
  settle: SettleClient;
  taskId: string;
  timeoutMs?: number;
  effects?: Record<string, EffectClass>;
  idempotencyKey?: (tool: string, args: unknown, ctx: { toolCallId?: string }) => string;
  approvals?: EffectClass[];
  approvalWaitMs?: number;
};
/** Runs the framework's agent once; resolves with each tool result as the model saw it (text). */
export type RunAgent = (turns: Turn[], options: AgentOptions) => Promise<string[]>;

export type Env = {
  t: TestContext;
  server: TestServer;
  provider: Provider;
  client: () => SettleClient;
  close: () => Promise<void>;
};

export const BUDGET_MS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Settle on PostgreSQL behind a real HTTP server, its verifier job ticking, a verifier worker serving refunds. */
export async function openEnv(): Promise<Env> {
  const t = await openSettle("postgres");
  const server = await startServer();
  const provider = createProvider();
  const client = () => createSettleClient({ url: server.url, key: t.key, batchDelayMs: 1 });
  // create_refund is money with a verifier (the catalog classifies it: no effects option needed); refund_batch is money.
  await addToolCatalogEntry(
    t.db,
    {
      runtime: t.runtime,
      pattern: "create_refund",
      effect_class: "money",
      // Asked 3 s after a call became unknown: later than a model's immediate retry, even on a busy machine.
      verify: { after_s: 3, every_s: 1, max_tries: 10, absent_after_s: 1, lease_s: 30 },
    },
    "admin@example.com",
  );
  await addToolCatalogEntry(
    t.db,
    { runtime: t.runtime, pattern: "refund_*", effect_class: "money" },
    "admin@example.com",
  );
  const worker = client();
  worker.verifier("create_refund", (item) => {
    const payment = (item.arguments as { payment?: string } | null)?.payment ?? "";
    const found = provider.findRefund(payment);
    return found
      ? { found: true, evidence: `refund ${found}`, ref: found }
      : { found: false, evidence: `no refund of ${payment}` };
  });
  const stop = new AbortController();
  const served = worker.serveVerifications({ signal: stop.signal, waitS: 1, worker: "framework-tests" });
  const jobs = setInterval(() => void runVerifications(t.db, new Date()).catch(() => {}), 250);
  return {
    t,
    server,
    provider,
    client,
    close: async () => {
      clearInterval(jobs);
      stop.abort();
      await served.catch(() => {});
      await server.close();
      await t.teardown();
    },
  };
}

type Row = { invocation_id: string; status: string; commit_state: string; idempotency_key: string };

/** Settle's invocations of a task, oldest first. */
export async function invocationsOf(env: Env, taskId: string): Promise<Row[]> {
  return env.t.db.driver.query<Row>(
    `SELECT invocation_id, status, commit_state, idempotency_key FROM invocations WHERE task_id = $1 ORDER BY first_seen_at, invocation_id`,
    [taskId],
  );
}

export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last value ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

/** A Settle client whose process can be killed: after kill(), nothing it sends leaves it and no answer comes back. */
export function dyingClient(env: Env): { client: SettleClient; kill: () => void } {
  let dead = false;
  const never = new Promise<Response>(() => {});
  const client = createSettleClient({
    url: env.server.url,
    key: env.t.key,
    batchDelayMs: 1,
    fetch: (input, init) => (dead ? never : fetch(input, init)),
  });
  return { client, kill: () => void (dead = true) };
}

const refund = (payment: string, amount: number): Turn => ({ tool: "create_refund", args: { payment, amount } });

/** 1. Timeout after send: unknown; the model's retry refused; a verifier finds nothing; the next call runs. */
export async function timeoutAfterSend(env: Env, run: RunAgent, tag: string) {
  const taskId = `timeout-${tag}`;
  const payment = `pay_timeout_${tag}`;
  env.provider.inject(payment, "lost");
  const options = { settle: env.client(), taskId, timeoutMs: BUDGET_MS };
  const seen = await run([refund(payment, 10), refund(payment, 10)], options);
  expect(seen[0]).toMatch(/^Unknown outcome: create_refund failed after it was sent .*Do not retry\.$/);
  expect(seen[1]).toMatch(
    /^Not run: an identical create_refund call \d+ s ago has an unknown outcome; Settle is checking it\. Do not retry\.$/,
  );
  const [first] = await waitFor(
    () => invocationsOf(env, taskId),
    (r) => r[0]?.status === "reconciled",
  );
  expect(first).toMatchObject({ status: "reconciled", commit_state: "not_committed" });
  const after = await run([refund(payment, 10)], options);
  expect(JSON.parse(after[0]!)).toMatchObject({ id: `re_${payment}`, status: "succeeded" });
  expect(await invocationsOf(env, taskId)).toMatchObject([{ status: "succeeded", commit_state: "committed" }]);
  expect({ effects: env.provider.effects(payment), deliveries: env.provider.deliveries(payment) }).toEqual({
    effects: 1,
    deliveries: 2,
  });
}

/** 2. A crash mid-call: the refund landed, the process died; the next run is refused until a verifier finds it. */
export async function crashMidCall(env: Env, run: RunAgent, tag: string) {
  const taskId = `crash-${tag}`;
  const payment = `pay_crash_${tag}`;
  const dying = dyingClient(env);
  env.provider.inject(payment, "crash");
  env.provider.onCrash(dying.kill);
  void run([refund(payment, 20)], { settle: dying.client, taskId, timeoutMs: BUDGET_MS });
  await waitFor(
    async () => env.provider.effects(payment),
    (n) => n === 1,
  );
  // The restarted agent, same task: the first call is still within its budget, then stalls; then it is settled.
  const options = { settle: env.client(), taskId, timeoutMs: BUDGET_MS };
  const early = await run([refund(payment, 20)], options);
  expect(early[0]).toMatch(
    /^Not run: an identical create_refund call \d+ s ago (is still in progress|has an unknown outcome)/,
  );
  await waitFor(
    () => invocationsOf(env, taskId),
    (r) => r[0]?.status === "reconciled",
  );
  expect(await invocationsOf(env, taskId)).toMatchObject([{ status: "reconciled", commit_state: "committed" }]);
  const later = await run([refund(payment, 20)], options);
  expect(later[0]).toMatch(
    /^Not run: an identical create_refund call \d+ s ago already took effect\. Use its result; do not call it again\.$/,
  );
  expect({ effects: env.provider.effects(payment), deliveries: env.provider.deliveries(payment) }).toEqual({
    effects: 1,
    deliveries: 1,
  });
}

/** 3. A rate limit with Retry-After: the retry at once is refused; after the wait it runs. */
export async function rateLimit(env: Env, run: RunAgent, tag: string) {
  const taskId = `rate-${tag}`;
  const payment = `pay_rate_${tag}`;
  env.provider.inject(payment, "rate_limit");
  const options = { settle: env.client(), taskId, timeoutMs: BUDGET_MS };
  const seen = await run([refund(payment, 30), refund(payment, 30)], options);
  expect(JSON.parse(seen[0]!)).toMatchObject({ status: 429, retry_after: 3 });
  expect(seen[1]).toMatch(
    /^Not run: the service asked to wait before create_refund is tried again, until \S+\. Nothing happened; try again after that\.$/,
  );
  expect(await invocationsOf(env, taskId)).toMatchObject([
    { status: "retry_scheduled", commit_state: "not_committed" },
  ]);
  // Until the provider's Retry-After has passed (Settle's not_before), however long the machine took so far.
  const [row] = await invocationsOf(env, taskId);
  const detail = await env.client().getInvocation(row!.invocation_id);
  const notBefore = Date.parse(String(detail.not_before));
  expect(notBefore).toBeGreaterThan(Date.now() - 3_000);
  await sleep(Math.max(0, notBefore - Date.now()) + 100);
  const after = await run([refund(payment, 30)], options);
  expect(JSON.parse(after[0]!)).toMatchObject({ status: "succeeded" });
  expect(await invocationsOf(env, taskId)).toMatchObject([{ status: "succeeded", commit_state: "committed" }]);
  expect({ effects: env.provider.effects(payment), deliveries: env.provider.deliveries(payment) }).toEqual({
    effects: 1,
    deliveries: 2,
  });
}

/** 4. A 200 with an error body: needs input, not committed; the corrected call is a new invocation and runs once. */
export async function errorBody200(env: Env, run: RunAgent, tag: string) {
  const taskId = `body-${tag}`;
  const payment = `pay_body_${tag}`;
  const seen = await run([refund(payment, -5), refund(payment, 5)], {
    settle: env.client(),
    taskId,
    timeoutMs: BUDGET_MS,
  });
  expect(JSON.parse(seen[0]!)).toMatchObject({ code: "INVALID_AMOUNT", field: "amount" });
  expect(JSON.parse(seen[1]!)).toMatchObject({ status: "succeeded", amount: 5 });
  expect(await invocationsOf(env, taskId)).toMatchObject([
    { status: "needs_input", commit_state: "not_committed" },
    { status: "succeeded", commit_state: "committed" },
  ]);
  expect(env.provider.effects(payment)).toBe(1);
}

/** 5. A partial bulk result: partially applied; the whole batch again is refused; the remainder runs once. */
export async function partialBulk(env: Env, run: RunAgent, tag: string) {
  const taskId = `bulk-${tag}`;
  const ok = [`pay_a_${tag}`, `pay_b_${tag}`];
  const batch = { tool: "refund_batch" as const, args: { payments: [ok[0]!, MERGED, LOCKED, ok[1]!] } };
  const seen = await run([batch, batch], { settle: env.client(), taskId, timeoutMs: BUDGET_MS });
  expect(JSON.parse(seen[0]!)).toMatchObject({ effect_applied: "partial" });
  expect(seen[1]).toMatch(/^Not run: an identical refund_batch call \d+ s ago was applied only in part\. /);
  const rest = await run([{ tool: "refund_batch", args: { payments: [LOCKED] } }], {
    settle: env.client(),
    taskId,
    timeoutMs: BUDGET_MS,
  });
  expect(JSON.parse(rest[0]!)).toMatchObject({ outcome: "ok", effect_applied: "yes" });
  expect(await invocationsOf(env, taskId)).toMatchObject([
    { status: "partially_applied", commit_state: "partial" },
    { status: "succeeded", commit_state: "committed" },
  ]);
  expect([...ok, MERGED, LOCKED].map((p) => env.provider.effects(p))).toEqual([1, 1, 0, 1]);
}

/** 6. A duplicate under a new key (a team keyed calls by the model's tool-call id): refused as the same call. */
export async function duplicateNewKey(env: Env, run: RunAgent, tag: string) {
  const taskId = `dup-${tag}`;
  const payment = `pay_dup_${tag}`;
  const options = {
    settle: env.client(),
    taskId,
    timeoutMs: BUDGET_MS,
    idempotencyKey: (tool: string, _args: unknown, ctx: { toolCallId?: string }) => `${tool}:${ctx.toolCallId}`,
  };
  const seen = await run([refund(payment, 40), refund(payment, 40)], options);
  expect(JSON.parse(seen[0]!)).toMatchObject({ status: "succeeded" });
  expect(seen[1]).toMatch(
    /^Not run: the same create_refund call \d+ s ago already took effect \(sent again under a new key\)\./,
  );
  const rows = await invocationsOf(env, taskId);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ status: "succeeded", commit_state: "committed" });
  expect(env.provider.effects(payment)).toBe(1);
}

/** A person acts in the console on the task's one invocation once it awaits approval. */
export async function decideWhenHeld(env: Env, taskId: string, action: OperatorAction): Promise<string> {
  const [held] = await waitFor(
    () => invocationsOf(env, taskId),
    (r) => r[0]?.status === "awaiting_approval",
  );
  const detail = await env.client().getInvocation(held!.invocation_id);
  const acted = await actOnInvocation(env.t.db, { invocationId: held!.invocation_id }, action, {
    actor: "ana@example.com",
    version: detail.version,
  });
  expect(acted.ok).toBe(true);
  return held!.invocation_id;
}

/** Approve with edits (issue 40 §2), for a framework whose call is held while it waits: the refund runs once, with the approved amount; Settle flags nothing. */
export async function approvedWithEdits(env: Env, run: RunAgent, tag: string) {
  const taskId = `edit-${tag}`;
  const payment = `pay_edit_${tag}`;
  const options = { settle: env.client(), taskId, approvals: ["money" as const], approvalWaitMs: 20_000 };
  const edited = { payment, amount: 40 };
  const [seen, id] = await Promise.all([
    run([refund(payment, 80)], options),
    decideWhenHeld(env, taskId, { action: "approve", arguments: edited, note: "half" }),
  ]);
  expect(JSON.parse(seen[0]!)).toMatchObject({ status: "succeeded", amount: 40 });
  expect({ effects: env.provider.effects(payment), deliveries: env.provider.deliveries(payment) }).toEqual({
    effects: 1,
    deliveries: 1,
  });
  expect(await env.client().getInvocation(id)).toMatchObject({
    status: "succeeded",
    ran_with_other_arguments: false,
    arguments_edit: { state: "approved", arguments: edited },
  });
}

/** A rejection's reply (issue 40 §2) is the tool's result the model reads; the refund never runs. */
export async function rejectedWithReply(env: Env, run: RunAgent, tag: string) {
  const taskId = `reply-${tag}`;
  const payment = `pay_reply_${tag}`;
  const options = { settle: env.client(), taskId, approvals: ["money" as const], approvalWaitMs: 20_000 };
  const reply = "Refund at most 50 EUR; ask the customer";
  const [seen] = await Promise.all([
    run([refund(payment, 80)], options),
    decideWhenHeld(env, taskId, { action: "reject", reply, note: "too much" }),
  ]);
  expect(seen[0]).toBe(
    `Not run: create_refund was rejected by ana@example.com in Settle. They said: "${reply}" Do not try it again; choose another way or ask the user.`,
  );
  expect(env.provider.deliveries(payment)).toBe(0);
}

export const sixFailures = { timeoutAfterSend, crashMidCall, rateLimit, errorBody200, partialBulk, duplicateNewKey };

/** The refund tools every framework's agent calls, backed by the fake provider. */
export const providerTools = (env: Env): RefundTools => ({
  create_refund: (args, signal) => env.provider.refund(args, "", signal),
  refund_batch: (args) => env.provider.refundBatch(args.payments, "batch"),
});
