import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";

// Concurrent batches that touch the same invocations must queue on their row
// locks: no deadlock, no record lost or stored twice, and the same final state
// as delivering the batches one after another.

const REQUESTS = 10;
const PER_REQUEST = 50;
const INVOCATIONS = 20;
const t0 = Date.parse("2026-11-29T05:00:00.000Z");

const envelopes = [
  { content: [{ type: "text", text: "socket hang up" }], isError: true },
  { outcome: "retryable", effect_applied: "no", retry_after_s: 5 },
  { ok: true, commit_state: "committed" },
  { status: "post_dispatch_evidence_failed", retryable: false },
  {
    outcome: "ok",
    effect_applied: "partial",
    items: [
      { item_id: "a", applied: "yes" },
      { item_id: "b", applied: "unknown" },
    ],
  },
];

/** Record g goes to invocation g % 20, so every request touches every invocation two or three times. */
function record(prefix: string, g: number): Record<string, unknown> {
  const invocation = g % INVOCATIONS;
  const j = Math.floor(g / INVOCATIONS);
  const phase = (["intent", "outcome", "probe"] as const)[j % 3];
  return {
    event_id: `${prefix}-${g}`,
    task_id: `task-${invocation % 4}`,
    invocation_id: `inv-${invocation}`,
    tool: "create_order",
    effect_class: invocation % 5 === 0 ? "money" : "create",
    attempt: Math.floor(j / 3) + 1,
    phase,
    at: new Date(t0 + (j * 7 + invocation) * 1000).toISOString(),
    ...(phase === "intent" ? {} : { envelope: envelopes[(g + j) % envelopes.length] }),
  };
}

const batches = (prefix: string) =>
  Array.from({ length: REQUESTS }, (_, q) =>
    Array.from({ length: PER_REQUEST }, (_, r) => record(prefix, q * PER_REQUEST + r)),
  );

/**
 * The invocation as the API shows it, minus what differs between two deliveries of the same records:
 * when they were received, and the version, which counts the writes that carried them (concurrent
 * requests of one runtime are written together, lib/write/coalesce.ts).
 */
async function view(key: string, invocationId: string) {
  const res = await call(getInvocation, { key, params: { invocation_id: invocationId } });
  expect(res.status).toBe(200);
  const { runtime: _runtime, version, attempts, ...rest } = res.body;
  expect(version).toBeGreaterThanOrEqual(1);
  return { ...rest, attempts: attempts.map(({ received_at: _received, ...a }: Record<string, unknown>) => a) };
}

describe.each<Backend>(["postgres", "pglite"])("concurrent ingest on %s", (backend) => {
  let t: TestContext;
  let sequentialKey: string;
  beforeAll(async () => {
    t = await openSettle(backend);
    sequentialKey = (await createRuntimeKey(t.db, "rt-sequential")).key;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it(`${REQUESTS} parallel requests × ${PER_REQUEST} records over ${INVOCATIONS} shared invocations: each record stored once, same state as in sequence`, async () => {
    const payloads = batches("c");
    // Every batch is sent twice at once: the copies race for the same event_ids.
    const responses = await Promise.all(
      [...payloads, ...payloads].map((records) => call(ingest, { key: t.key, body: { records } })),
    );
    for (const res of responses) expect(res.status).toBe(207);
    const sum = (field: "accepted" | "duplicates" | "rejected") => responses.reduce((n, r) => n + r.body[field], 0);
    expect(sum("accepted")).toBe(REQUESTS * PER_REQUEST);
    expect(sum("duplicates")).toBe(REQUESTS * PER_REQUEST);
    expect(sum("rejected")).toBe(0);
    const accepted = new Map<string, number>();
    for (const res of responses) {
      for (const r of res.body.results)
        if (r.status === "accepted") accepted.set(r.event_id, (accepted.get(r.event_id) ?? 0) + 1);
    }
    expect(accepted.size).toBe(REQUESTS * PER_REQUEST);
    expect([...accepted.values()].every((n) => n === 1)).toBe(true);

    for (const records of payloads) {
      const res = await call(ingest, { key: sequentialKey, body: { records } });
      expect(res.body.accepted).toBe(PER_REQUEST);
    }

    for (let i = 0; i < INVOCATIONS; i += 1) {
      const concurrent = await view(t.key, `inv-${i}`);
      expect(concurrent.attempts).toHaveLength((REQUESTS * PER_REQUEST) / INVOCATIONS);
      expect(concurrent).toEqual(await view(sequentialKey, `inv-${i}`));
    }
  });

  it("a resent batch, in parallel with itself, changes nothing", async () => {
    const payloads = batches("c");
    const before = await view(t.key, "inv-3");
    const responses = await Promise.all(payloads.map((records) => call(ingest, { key: t.key, body: { records } })));
    expect(responses.reduce((n, r) => n + r.body.duplicates, 0)).toBe(REQUESTS * PER_REQUEST);
    expect(await view(t.key, "inv-3")).toEqual(before);
  });
});
