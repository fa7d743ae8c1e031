import { spawn } from "node:child_process";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { closeDb } from "@/lib/db/client";
import { createPostgresDriver } from "@/lib/db/driver";
import { applyMigrations } from "@/lib/db/migrate";
import { setEnv } from "@/lib/env";
import { call, createDatabase, openSettle, type TestContext } from "./harness";
import { ingest, live, prometheus, ready } from "./routes";

// What a self-hosting team's platform asks of Settle (docs/operations.md):
// liveness and readiness, Prometheus metrics, and a JSON log line per request.

afterEach(() => setEnv({ NODE_ENV: "test", SETTLE_METRICS_TOKEN: undefined }));

describe("liveness and readiness", () => {
  const databases: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await closeDb();
    for (const drop of databases) await drop();
  });

  it("is not ready before migrations (503 MIGRATIONS_PENDING) while alive, and ready once they are applied", async () => {
    await closeDb();
    const database = await createDatabase();
    databases.push(database.drop);
    // A production PostgreSQL is migrated on purpose (`settle migrate`), never by the server itself.
    setEnv({ DATABASE_URL: database.url, SETTLE_DATA_DIR: undefined, NODE_ENV: "production" });
    expect(await call(live)).toMatchObject({ status: 200, body: { ok: true } });
    const before = await call(ready);
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ ok: false, code: "MIGRATIONS_PENDING" });

    const driver = createPostgresDriver(database.url, 1);
    const applied = await applyMigrations(driver);
    await driver.close();
    const after = await call(ready);
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ ready: true, database: "postgres", migrations: applied.applied.length });
    expect(applied.applied.length).toBeGreaterThan(10);
  });

  it("is not ready, and says why, when the database cannot be reached; still alive", async () => {
    await closeDb();
    setEnv({ DATABASE_URL: "postgresql://postgres@127.0.0.1:1/settle", NODE_ENV: "production" });
    const down = await call(ready);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ ok: false, code: "DATABASE_UNAVAILABLE" });
    expect((await call(live)).status).toBe(200);
    await closeDb();
  });
});

/** Prometheus's text format, line by line: a comment, or `name{labels} value`. */
function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})?) (\S+)$/.exec(
      line,
    );
    if (!sample) throw new Error(`not Prometheus text: ${line}`);
    samples.set(sample[1]!, Number(sample[2]));
  }
  return samples;
}

describe.each(["postgres", "pglite"] as const)("GET /api/metrics (and /metrics) on %s", (backend) => {
  let t: TestContext;
  afterAll(async () => {
    await t?.teardown();
  });

  it("is off without a token, refuses a wrong one, and serves the named series to the right one", async () => {
    t = await openSettle(backend);
    expect((await call(prometheus)).status).toBe(404);
    setEnv({ SETTLE_METRICS_TOKEN: "scrape-me-please-0123" });
    expect((await call(prometheus)).status).toBe(401);
    expect((await call(prometheus, { key: "scrape-me-please-0124" })).status).toBe(401);
    // Hostile credentials are a typed 401, never a 5xx: empty, huge, SQL and latin-1 text, another scheme.
    for (const authorization of [
      "Bearer ",
      "Bearer " + "x".repeat(100_000),
      "Bearer tok'; DROP TABLE invocations;--\u00e9",
      "Basic c2NyYXBl",
    ]) {
      const refused = await call(prometheus, { headers: { authorization } });
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ ok: false, code: "UNAUTHENTICATED" });
    }

    const records = [
      {
        task_id: "m-1",
        invocation_id: "m-1",
        tool: "charge_card",
        effect_class: "money",
        envelope: { outcome: "unknown" },
      },
      { task_id: "m-2", invocation_id: "m-2", tool: "send_email", effect_class: "send", envelope: { ok: true } },
      { task_id: "m-3", tool: "no_invocation" },
    ];
    expect((await call(ingest, { key: t.key, body: { records } })).status).toBe(207);
    const res = await call(prometheus, { key: "scrape-me-please-0123" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseExposition(res.body as string);
    expect(samples.get('settle_ingest_records_total{result="accepted"}')).toBeGreaterThanOrEqual(2);
    expect(samples.get('settle_ingest_records_total{result="rejected"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('settle_queue_invocations{status="outcome_unknown",effect_class="money"}')).toBe(1);
    expect(samples.get('settle_unknown_invocations{effect_class="money"}')).toBe(1);
    expect(samples.get('settle_webhook_backlog{target="endpoint"}')).toBe(0);
    expect(samples.get('settle_verification_backlog{state="due"}')).toBe(0);
    const latency = [...samples.keys()].find((k) =>
      k.startsWith('settle_http_request_duration_seconds_count{method="POST",route="/api/v1/envelopes",status="207"}'),
    );
    expect(latency).toBeDefined();
    expect([...samples.keys()].some((k) => k.startsWith("settle_process_"))).toBe(true);
  });
});

describe("the JSON log", () => {
  it("writes one line per request (id, route template, status, duration) and per job run, and never a key or a body", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "./scripts/server-only-off.mjs", "--import", "tsx", "tests/integration/log-probe.ts"],
      {
        cwd: process.cwd(),
        env: { ...process.env, SETTLE_LOG_LEVEL: "debug", DATABASE_URL: "", SETTLE_DATA_DIR: "memory://" },
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    await new Promise((resolve) => child.once("close", resolve));
    const [key] = /stl_rk_\w+/.exec(err)!;
    const lines = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      level: "info",
      service: "settle",
      method: "POST",
      route: "/api/v1/envelopes",
      status: 207,
      principal: "runtime:log-probe",
    });
    expect(requests[1]).toMatchObject({ route: "/api/v1/invocations/{invocation_id}/decision", status: 200 });
    for (const r of requests) {
      expect(r.request_id).toMatch(/\S{8,}/);
      expect(typeof r.duration_ms).toBe("number");
      expect(typeof r.time).toBe("string");
    }
    expect(lines.filter((l) => l.msg === "background job").length).toBeGreaterThanOrEqual(5);
    expect(out).not.toContain(key.slice(8));
    expect(out + err).not.toContain("hunter2-secret");
  }, 60_000);
});
