import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setEnv } from "@/lib/env";
import { openSettle, type TestContext } from "./harness";
import { startServer, type TestServer } from "./http-server";

// The latency histogram's `route` label is the route's declared template, whoever calls and however the call
// ends: a request refused before its parameters are read (no key: 401) once put its raw path there, and 300
// key-less requests with 8,000-character ids took /metrics from 12 KB to 39 MB. No caller, with or without a
// key, may mint a series.

const METRICS_TOKEN = "scrape-me-please-labels-0123";

function latencySeries(exposition: string): Set<string> {
  const series = new Set<string>();
  for (const line of exposition.split("\n")) {
    const match = /^settle_http_request_duration_seconds_count(\{.*\}) /.exec(line);
    if (match) series.add(match[1]!);
  }
  return series;
}

describe("the latency histogram's route label", () => {
  let t: TestContext;
  let server: TestServer;
  beforeAll(async () => {
    t = await openSettle("postgres");
    server = await startServer();
  });
  afterAll(async () => {
    setEnv({ SETTLE_METRICS_TOKEN: undefined });
    await server?.close();
    await t?.teardown();
  });

  const scrape = async () => {
    const res = await fetch(`${server.url}/api/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    return latencySeries(await res.text());
  };

  // One of each shape an attacker tried: a long id on a hot route (the fast lane), on a Next.js-served route,
  // under a key Settle does not know, a path no route declares, and a runtime key on another runtime's id.
  const shapes = (n: number) => {
    const id = `${n}-${randomBytes(4).toString("hex")}`.padEnd(n % 3 === 0 ? 2_000 : 12, "x");
    return [
      { method: "GET", path: `/api/v1/invocations/${id}/decision`, headers: {} as Record<string, string> },
      { method: "GET", path: `/api/v1/tasks/${id}/timeline`, headers: {} },
      { method: "GET", path: `/api/v1/invocations/${id}`, headers: { authorization: `Bearer stl_rk_${id}` } },
      { method: "POST", path: `/api/v1/invocations/${id}/actions`, headers: {} },
      { method: "GET", path: `/api/v1/invocations/${encodeURIComponent(`a/${id}`)}/attempts`, headers: {} },
      { method: "GET", path: `/api/v1/admin/webhooks/${id}/deliveries/${id}`, headers: {} },
      { method: "GET", path: `/api/v1/invocations/${id}/decision`, headers: { authorization: `Bearer ${t.key}` } },
    ];
  };

  it("adds no series for 1,000 distinct key-less paths (SETTLE_METRICS_TOKEN unset while they arrive)", async () => {
    const send = async (n: number) => {
      const shape = shapes(n)[n % 7]!;
      const res = await fetch(`${server.url}${shape.path}`, { method: shape.method, headers: shape.headers });
      await res.arrayBuffer();
      expect(res.status).toBeLessThan(500);
    };
    // Every shape once, so each (method, template, status) it earns exists before counting.
    for (let n = 0; n < 14; n += 1) await send(n);
    setEnv({ SETTLE_METRICS_TOKEN: METRICS_TOKEN });
    const before = await scrape();
    setEnv({ SETTLE_METRICS_TOKEN: undefined });

    for (let n = 14; n < 1_014; n += 10) await Promise.all(Array.from({ length: 10 }, (_, i) => send(n + i)));

    setEnv({ SETTLE_METRICS_TOKEN: METRICS_TOKEN });
    const after = await scrape();
    setEnv({ SETTLE_METRICS_TOKEN: undefined });
    // The scrape itself is one more request: its own series may be new, nothing else.
    const added = [...after].filter((s) => !before.has(s) && !s.includes('route="/api/metrics"'));
    expect({ added: added.length, first: added.slice(0, 2).map((s) => s.slice(0, 120)) }).toEqual({
      added: 0,
      first: [],
    });
    for (const series of after) expect(series.length).toBeLessThan(200);
    expect([...after].some((s) => s.includes('route="/api/v1/invocations/{invocation_id}/decision"'))).toBe(true);
  });

  it("labels a key-less refusal by its template", async () => {
    await fetch(`${server.url}/api/v1/tasks/${"t".repeat(300)}`).then((r) => r.arrayBuffer());
    setEnv({ SETTLE_METRICS_TOKEN: METRICS_TOKEN });
    const series = await scrape();
    setEnv({ SETTLE_METRICS_TOKEN: undefined });
    expect(series).toContain('{method="GET",route="/api/v1/tasks/{task_id}",status="401"}');
    expect([...series].filter((s) => s.includes("ttttt"))).toEqual([]);
  });
});
