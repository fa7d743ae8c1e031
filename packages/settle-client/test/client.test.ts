import { describe, expect, it } from "vitest";
import { createSettleClient, SettleError, type SettleRecord } from "../src/index.js";
import { createFakeSettle } from "./fake-settle.js";

const record = (n: number, extra: Partial<SettleRecord> = {}): SettleRecord => ({
  event_id: `rt:t1:${n}:outcome`,
  task_id: "t1",
  invocation_id: `inv-${n}`,
  tool: "create_order",
  envelope: { outcome: "ok", effect_applied: "yes" },
  ...extra,
});

function setup(options: { batchSize?: number } = {}) {
  const settle = createFakeSettle();
  const sleeps: number[] = [];
  const client = createSettleClient({
    url: "http://settle.test/",
    key: "stl_rk_test",
    fetch: settle.fetch,
    batchSize: options.batchSize,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { settle, client, sleeps };
}

const posts = (settle: ReturnType<typeof createFakeSettle>) =>
  settle.requests.filter((r) => r.path === "/api/v1/envelopes");

describe("report", () => {
  it("sends records reported in the same moment in one request, and answers each with its own result", async () => {
    const { settle, client } = setup();
    const [a, b, c] = await Promise.all([
      client.report(record(1)),
      client.report(record(2)),
      client.report([record(3), record(1)]),
    ]);
    expect(posts(settle)).toHaveLength(1);
    expect(posts(settle)[0]!.headers.authorization).toBe("Bearer stl_rk_test");
    expect(a).toMatchObject({ status: "accepted", event_id: "rt:t1:1:outcome", resent: false });
    expect(b).toMatchObject({ status: "accepted", event_id: "rt:t1:2:outcome" });
    expect(c.map((r) => r.status)).toEqual(["accepted", "duplicate"]);
  });

  it("splits at the batch size and keeps every record's result in order", async () => {
    const { settle, client } = setup({ batchSize: 3 });
    const results = await client.report(Array.from({ length: 7 }, (_, i) => record(i)));
    expect(posts(settle).map((r) => (r.body as { records: unknown[] }).records.length)).toEqual([3, 3, 1]);
    expect(results.map((r) => r.event_id)).toEqual(Array.from({ length: 7 }, (_, i) => `rt:t1:${i}:outcome`));
  });

  it("keeps a request under the byte limit: large records travel in several requests", async () => {
    const settle = createFakeSettle();
    const client = createSettleClient({ url: "http://settle.test", key: "k", fetch: settle.fetch });
    const big = (n: number) =>
      record(n, { envelope: { outcome: "ok", effect_applied: "yes", message: "x".repeat(300_000) } });
    const results = await client.report([big(1), big(2), big(3), big(4)]);
    const sizes = posts(settle).map((r) => (r.body as { records: unknown[] }).records.length);
    expect(sizes).toEqual([3, 1]);
    expect(results.every((r) => r.status === "accepted")).toBe(true);
  });

  it("gives a rejected record its rejection without failing the others", async () => {
    const { client } = setup();
    const [ok, bad] = await client.report([record(1), { ...record(2), task_id: "" }]);
    expect(ok!.status).toBe("accepted");
    expect(bad).toMatchObject({ status: "rejected", error: { code: "MISSING_REQUIRED_FIELD" } });
  });

  it("resends the same batch after a lost answer; Settle's dedupe by event_id makes that safe, and `resent` says so", async () => {
    const { settle, client, sleeps } = setup();
    settle.faults.push({ path: "/api/v1/envelopes", fault: "lose_answer" });
    const result = await client.report(record(1));
    expect(posts(settle)).toHaveLength(2);
    expect(posts(settle)[1]!.body).toEqual(posts(settle)[0]!.body);
    expect(result).toMatchObject({ status: "duplicate", resent: true });
    expect(settle.records).toHaveLength(1);
    expect(sleeps).toHaveLength(1);
  });

  it("waits and resends on 503 with Settle's envelope; nothing was stored, so a duplicate would be news", async () => {
    const { settle, client } = setup();
    settle.faults.push(
      { path: "/api/v1/envelopes", fault: "unavailable" },
      { path: "/api/v1/envelopes", fault: "unavailable" },
    );
    const result = await client.report(record(1));
    expect(posts(settle)).toHaveLength(3);
    expect(result).toMatchObject({ status: "accepted", resent: false });
  });

  it("gives up after its retries with a SettleError that says so", async () => {
    const { settle, client } = setup();
    for (let i = 0; i < 6; i += 1) settle.faults.push({ path: "/api/v1/envelopes", fault: "unreachable" });
    await expect(client.report(record(1))).rejects.toMatchObject({
      name: "SettleError",
      code: "UNREACHABLE",
      status: 0,
    });
    expect(posts(settle)).toHaveLength(6);
  });
});

describe("guard and decisions", () => {
  it("a refused request is a SettleError carrying Settle's envelope, not retried", async () => {
    const { settle, client } = setup();
    const err = await client.getDecision("nope").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SettleError);
    expect(err).toMatchObject({ status: 404, code: "NOT_FOUND" });
    expect(settle.requests).toHaveLength(1);
  });

  it("awaitDecision long-polls with the last ETag until the decision is no longer wait", async () => {
    const { settle, client } = setup();
    await client.report(record(1, { phase: "intent", envelope: undefined }));
    setTimeout(() => settle.setDecision("inv-1", { status: "reconciled", decision: "retry_allowed" }), 120);
    const decision = await client.awaitDecision("inv-1", { timeout: 5_000 });
    expect(decision).toMatchObject({ decision: "retry_allowed", status: "reconciled" });
    const polls = settle.requests.filter((r) => r.path.startsWith("/api/v1/invocations/inv-1/decision"));
    expect(polls[0]!.path).toBe("/api/v1/invocations/inv-1/decision");
    for (const poll of polls.slice(1)) expect(poll.path).toMatch(/\?wait=[1-5]$/);
    expect(polls[1]!.headers["if-none-match"]).toBe('"1-wait"');
  });

  it("awaitDecision returns the last decision when the timeout passes", async () => {
    const { client } = setup();
    await client.report(record(1, { phase: "intent", envelope: undefined }));
    const started = Date.now();
    const decision = await client.awaitDecision("inv-1", { timeout: 300 });
    expect(decision.decision).toBe("wait");
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
