import { createBenchDatabase, freePort, prepareDatabase, startServer } from "../setup";

// Where a guarded call's time goes in Settle, apart from the gateway: GET /api/health (a Next.js
// round trip and nothing else), the guard as the README shows it, the guard as the gateway sends it
// (with the call as its envelope), and the guard followed by the outcome report. Each case runs on
// two servers of the same build and database, alternately: `npm start` as shipped (the hot routes in
// the fast lane, decision 024) and with SETTLE_FAST_LANE=off (every request through Next.js). Not
// part of bench:gateway's figures: `node --import ./scripts/server-only-off.mjs --import tsx bench/gateway/guard-share.ts`.
const N = Number(process.argv[2] ?? 300);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * xs.length)]!.toFixed(1);
const db = await createBenchDatabase();
const { key } = await prepareDatabase(db.url);
const secret = { SETTLE_AUTH_SECRET: "bench-gateway-secret-at-least-32-characters" };
const servers = {
  lane: await startServer(db.url, await freePort(), secret),
  next: await startServer(db.url, await freePort(), { ...secret, SETTLE_FAST_LANE: "off" }),
};
let server = servers.lane;
const post = async (path: string, body: unknown) => {
  const t = performance.now();
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await res.text();
  return performance.now() - t;
};
const envelope = {
  gateway: "settle-mcp",
  decision: "forwarded",
  effect_class: "create",
  effect_source: "config",
  request: {
    method: "tools/call",
    params: { name: "create_order", arguments: { customer: "c", items: [{ sku: "SKU-1", qty: 1 }] } },
  },
};
const cases: Record<string, (i: number) => Promise<number>> = {
  health: async () => {
    const t = performance.now();
    await (await fetch(`${server.url}/api/health`)).text();
    return performance.now() - t;
  },
  guard_bare: (i) =>
    post("/api/v1/guard", { task_id: "t", tool: "create_order", idempotency_key: `bare-${i}`, effect_class: "create" }),
  guard_with_envelope: (i) =>
    post("/api/v1/guard", {
      task_id: "t",
      tool: "create_order",
      idempotency_key: `env-${i}`,
      effect_class: "create",
      budget_left_s: 10,
      args_digest: "sha256:x",
      envelope,
    }),
  guard_then_report: async (i) => {
    const ms = await post("/api/v1/guard", {
      task_id: "t",
      tool: "create_order",
      idempotency_key: `rep-${i}`,
      effect_class: "create",
      envelope,
    });
    void post("/api/v1/envelopes", {
      records: [
        {
          event_id: `t:rep-${i}:a1:outcome`,
          task_id: "t",
          invocation_id: `t:rep-${i}`,
          attempt: 1,
          tool: "create_order",
          effect_class: "create",
          idempotency_key: `rep-${i}`,
          envelope: { content: [{ type: "text", text: "ok" }] },
        },
      ],
    });
    await new Promise((r) => setTimeout(r, 8));
    return ms;
  },
};
for (const [name, run] of Object.entries(cases)) {
  const xs: Record<keyof typeof servers, number[]> = { lane: [], next: [] };
  for (const which of ["lane", "next"] as const) {
    server = servers[which];
    for (let i = 0; i < 20; i += 1) await run(-i - 1 - (which === "next" ? 1000 : 0));
  }
  for (let i = 0; i < N; i += 1) {
    for (const which of ["lane", "next"] as const) {
      server = servers[which];
      xs[which].push(await run(i + (which === "next" ? 100_000 : 0)));
    }
  }
  console.log(
    `${name}: fast lane p50 ${pct(xs.lane, 50)} ms, p95 ${pct(xs.lane, 95)} ms · through Next.js p50 ${pct(xs.next, 50)} ms, p95 ${pct(xs.next, 95)} ms`,
  );
}
await servers.lane.stop();
await servers.next.stop();
await db.drop();
