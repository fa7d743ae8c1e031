import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revokeRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

const record = (i: number) => ({
  event_id: `lim-${i}`,
  task_id: "t",
  invocation_id: `inv-${i}`,
  tool: "get_price",
  effect_class: "read",
});

function expectEnvelope(body: unknown, code: string) {
  expect(body).toMatchObject({
    ok: false,
    code,
    commit_state: "not_committed",
    retry: expect.objectContaining({ directive: expect.any(String) }),
    next_action: expect.any(String),
    operation_ref: expect.any(String),
    agent_message: expect.any(String),
    user_message: expect.any(String),
  });
}

describe.each<Backend>(["postgres", "pglite"])("request limits and auth on %s", (backend) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle(backend);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it.each([
    ["no Authorization header", null, "UNAUTHENTICATED"],
    ["a key that is not Settle's", "sk-live-123", "UNAUTHENTICATED"],
    ["an unknown Settle key", "stl_rk_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "UNAUTHENTICATED"],
  ])("401 for %s", async (_name, key, code) => {
    const res = await call(ingest, { key, body: record(1) });
    expect(res.status).toBe(401);
    expectEnvelope(res.body, code);
  });

  it("stores a key only as its SHA-256, under a recognizable prefix", async () => {
    const rows = await t.db.prisma.runtimeKey.findMany();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(t.key);
    const mine = rows.find((r) => t.key.startsWith(`${r.prefix}_`));
    expect(mine?.prefix).toMatch(/^stl_rk_[a-z0-9]{8}$/);
    const { createHash } = await import("node:crypto");
    expect(mine?.hash).toBe(createHash("sha256").update(t.key).digest("hex"));
  });

  it("401 KEY_REVOKED once a key is revoked, at its next request", async () => {
    const { createRuntimeKey } = await import("@/lib/identity/runtime-keys");
    const { key, prefix } = await createRuntimeKey(t.db, "rt-revoke");
    expect((await call(ingest, { key, body: record(2) })).status).toBe(207);
    await revokeRuntimeKey(t.db, prefix);
    const res = await call(ingest, { key, body: record(3) });
    expect(res.status).toBe(401);
    expectEnvelope(res.body, "KEY_REVOKED");
  });

  it("413 for a body over 1 MiB, storing nothing", async () => {
    const big = { ...record(4), envelope: { content: [{ type: "text", text: "x".repeat(1024 * 1024) }] } };
    const res = await call(ingest, { key: t.key, body: big });
    expect(res.status).toBe(413);
    expectEnvelope(res.body, "PAYLOAD_TOO_LARGE");
    expect(await t.db.prisma.attempt.count({ where: { eventKey: "lim-4" } })).toBe(0);
  });

  it("413 for more than 500 records", async () => {
    const res = await call(ingest, {
      key: t.key,
      body: { records: Array.from({ length: 501 }, (_, i) => record(1000 + i)) },
    });
    expect(res.status).toBe(413);
    expectEnvelope(res.body, "TOO_MANY_RECORDS");
    expect(await t.db.prisma.attempt.count({ where: { eventKey: { startsWith: "lim-1" } } })).toBe(0);
  });

  it("500 records are accepted", async () => {
    const res = await call(ingest, {
      key: t.key,
      body: { records: Array.from({ length: 500 }, (_, i) => record(5000 + i)) },
    });
    expect(res.status).toBe(207);
    expect(res.body.accepted).toBe(500);
  });

  it("415 for another content type", async () => {
    const res = await call(ingest, { key: t.key, raw: JSON.stringify(record(5)), contentType: "text/plain" });
    expect(res.status).toBe(415);
    expectEnvelope(res.body, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("400 for an unparsable body", async () => {
    const res = await call(ingest, { key: t.key, raw: '{"task_id": "t",', contentType: "application/json" });
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "INVALID_JSON");
  });

  it("400 for an empty batch", async () => {
    const res = await call(ingest, { key: t.key, body: { records: [] } });
    expect(res.status).toBe(400);
    expectEnvelope(res.body, "INVALID_REQUEST");
  });

  it("every rejected record carries a typed error and stores nothing", async () => {
    const res = await call(ingest, {
      key: t.key,
      body: {
        records: [
          "not an object",
          { event_id: "bad-at", task_id: "t", invocation_id: "i", tool: "x", at: "yesterday" },
          { event_id: "bad-attempt", task_id: "t", invocation_id: "i", tool: "x", attempt: -1 },
          {
            event_id: "deep",
            task_id: "t",
            invocation_id: "i",
            tool: "x",
            envelope: JSON.parse("[".repeat(100) + "]".repeat(100)),
          },
        ],
      },
    });
    expect(res.status).toBe(207);
    expect(res.body.results.map((r: { error: { code: string } }) => r.error.code)).toEqual([
      "INVALID_RECORD",
      "INVALID_TIMESTAMP",
      "INVALID_RECORD",
      "ENVELOPE_TOO_DEEP",
    ]);
    for (const r of res.body.results) expectEnvelope(r.error, r.error.code);
    expect(await t.db.prisma.attempt.count({ where: { eventKey: { in: ["bad-at", "bad-attempt", "deep"] } } })).toBe(0);
  });
});
