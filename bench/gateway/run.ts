import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { readLedger } from "../../packages/settle-mcp-gateway/test/shop/shop-tools";
import type { CallLog } from "../../packages/settle-mcp-gateway/src/tool-call";
import {
  createBenchDatabase,
  ensureBuild,
  freePort,
  gitHead,
  prepareDatabase,
  releaseOnExit,
  startServer,
  type BenchDatabase,
  type BenchServer,
  resultsDir,
} from "../setup";
import { makeIntent, runChaos, seeded, type Intent } from "./chaos";
import { verify } from "./check";
import { startGateway, superviseShop } from "./processes";

// npm run bench:gateway — the MCP gateway under chaos, against Settle's
// production build on a fresh PostgreSQL database:
// 1. latency: the same calls straight to the shop and through `settle-mcp`,
//    alternately, one at a time, no faults; the gateway's added p50 and p95;
// 2. chaos: 2,000 intents, 8 at a time, with 5 % of calls meeting a response
//    stream that breaks after the effect and 2 % a shop that crashes after it
//    (its supervisor starts it again), and Settle itself restarted once midway;
// 3. the check: every attempt sent is in Settle, every denial too, and no
//    intent has two business effects. Figures: bench/results/gateway-*.json.

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=") as [string, string]));
const INTENTS = Number(args.get("intents") ?? 2000);
const LATENCY_PAIRS = Number(args.get("latency") ?? 300);
const CONCURRENCY = Number(args.get("concurrency") ?? 8);
const SEED = Number(args.get("seed") ?? 11);

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const round = (x: number) => Math.round(x * 10) / 10;
const logsOf = (stderr: string) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith('{"settle_mcp":"call"'))
    .map((l) => JSON.parse(l) as CallLog);

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function timed(client: Client, intent: Intent): Promise<number> {
  const started = performance.now();
  const result = (await client.callTool({ name: intent.tool, arguments: intent.arguments })) as { isError?: boolean };
  if (result.isError && intent.tool !== "send_email")
    throw new Error(`latency call failed: ${JSON.stringify(result).slice(0, 300)}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  let server: BenchServer | null = null;
  let database: BenchDatabase | null = null;
  const cleanup = releaseOnExit(() => ({ server, database }));
  try {
    console.log(`• build: ${ensureBuild((args.get("build") as "skip") ?? "auto")}`);
    database = await createBenchDatabase();
    const { key, runtimeId } = await prepareDatabase(database.url);
    const settlePort = await freePort();
    server = await startServer(database.url, settlePort, {
      SETTLE_AUTH_SECRET: "bench-gateway-secret-at-least-32-characters",
    });
    const dir = mkdtempSync(path.join(tmpdir(), "settle-mcp-bench-"));
    const ledgerFile = path.join(dir, "ledger.jsonl");
    const faultsFile = path.join(dir, "faults.jsonl");
    writeFileSync(faultsFile, "");
    const shop = await superviseShop(await freePort(), { SHOP_LEDGER: ledgerFile, SHOP_FAULTS: faultsFile });
    const config = {
      tools: [
        {
          match: "create_order",
          effect: "create",
          replay: true,
          probe: { tool: "get_order", arguments: { idempotency_key: "{{idempotency_key}}" } },
        },
        { match: "charge_card", effect: "money" },
        { match: "send_email", effect: "send" },
      ],
      call_timeout_s: 10,
      in_flight_wait_s: 2,
      spool_dir: path.join(dir, "spool"),
    };
    const gateway = await startGateway({
      port: await freePort(),
      upstream: shop.url,
      settleUrl: server.url,
      key,
      config,
      dir,
    });
    console.log(`• Settle ${server.url} (PostgreSQL ${database.name}), shop ${shop.url}, gateway ${gateway.url}`);

    // 1. Latency, in the same run, before the chaos.
    const direct = await connect(shop.url);
    const through = await connect(gateway.url);
    const rng = seeded(SEED);
    const latency = { direct: [] as number[], gateway: [] as number[] };
    for (let i = 0; i < 20; i += 1) await timed(through, makeIntent(i, rng, "warm"));
    for (let i = 0; i < LATENCY_PAIRS; i += 1) {
      latency.direct.push(await timed(direct, makeIntent(i, rng, "lat-direct")));
      latency.gateway.push(await timed(through, makeIntent(i, rng, "lat-gw")));
    }
    // Settle's own share, straight from this process: its guard (what every write waits for) and its cheapest route.
    const settleTimes = { guard: [] as number[], health: [] as number[] };
    for (let i = 0; i < LATENCY_PAIRS; i += 1) {
      let t = performance.now();
      const res = await fetch(`${server.url}/api/v1/guard`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          task_id: "bench-guard",
          tool: "create_order",
          idempotency_key: `bench-guard-${i}`,
          effect_class: "create",
        }),
      });
      await res.text();
      settleTimes.guard.push(performance.now() - t);
      t = performance.now();
      await (await fetch(`${server.url}/api/health`)).text();
      settleTimes.health.push(performance.now() - t);
    }
    const lat = (xs: number[]) => ({ p50: round(percentile(xs, 50)), p95: round(percentile(xs, 95)) });
    const internal = logsOf(gateway.stderr()).slice(20, 20 + LATENCY_PAIRS);
    const inside = {
      gateway_ms: lat(internal.map((l) => l.ms)),
      guard_ms: lat(internal.map((l) => l.guard_ms)),
      settle_guard_direct_ms: lat(settleTimes.guard),
      settle_health_ms: lat(settleTimes.health),
    };
    const added = {
      p50: round(percentile(latency.gateway, 50) - percentile(latency.direct, 50)),
      p95: round(percentile(latency.gateway, 95) - percentile(latency.direct, 95)),
    };
    console.log(
      `• latency over ${LATENCY_PAIRS} pairs: direct ${JSON.stringify(lat(latency.direct))} ms, gateway ${JSON.stringify(lat(latency.gateway))} ms, added ${JSON.stringify(added)} ms; inside the gateway ${JSON.stringify(inside)}`,
    );

    // 2. Chaos, with Settle restarted once halfway.
    const clients = await Promise.all(Array.from({ length: CONCURRENCY }, () => connect(gateway.url)));
    const intents = Array.from({ length: INTENTS }, (_, n) => makeIntent(n, rng, "chaos"));
    let restarted: Promise<void> | null = null;
    const restart = { at: 0, downMs: 0 };
    const started = Date.now();
    const runs = await runChaos(
      clients,
      intents,
      { faultsFile, brokenStreamRate: 0.05, crashRate: 0.02, rng },
      (done) => {
        if (done === Math.floor(INTENTS / 2) && !restarted) {
          restarted = (async () => {
            const t = Date.now();
            restart.at = done;
            await server!.stop();
            server = await startServer(database!.url, settlePort, {
              SETTLE_AUTH_SECRET: "bench-gateway-secret-at-least-32-characters",
            });
            restart.downMs = Date.now() - t;
            console.log(`• Settle restarted after ${done} intents, down ${restart.downMs} ms`);
          })();
        }
        if (done % 250 === 0) console.log(`  ${done}/${INTENTS} intents`);
      },
    );
    await restarted;
    const chaosMs = Date.now() - started;
    await Promise.all([...clients, direct, through].map((c) => c.close().catch(() => {})));
    // The gateway drains on SIGTERM: calls in flight finish, the spool goes to Settle.
    await gateway.stop();
    const logs = logsOf(gateway.stderr());
    // The warm-up and latency calls came first, one at a time: the rest is the chaos.
    const chaosLogs = logs.slice(20 + LATENCY_PAIRS);
    const ledger = readLedger(ledgerFile).filter((l) => JSON.stringify(l.detail).includes("chaos-"));
    const verdict = await verify(database.url, runtimeId, runs, chaosLogs, ledger);
    const result = {
      at: new Date().toISOString(),
      commit: gitHead(),
      // SETTLE_FAST_LANE=off in the environment reaches the server: every request through Next.js (decision 024).
      settings: {
        intents: INTENTS,
        concurrency: CONCURRENCY,
        seed: SEED,
        broken_stream_rate: 0.05,
        crash_rate: 0.02,
        latency_pairs: LATENCY_PAIRS,
        fast_lane: process.env.SETTLE_FAST_LANE !== "off",
      },
      latency_ms: { direct: lat(latency.direct), gateway: lat(latency.gateway), added, inside },
      chaos: { ms: chaosMs, shop_crashes: shop.crashes(), settle_restart: restart, ...verdict },
    };
    await shop.close();
    const file = path.join(resultsDir(), `gateway-${result.at.replace(/[:.]/g, "-").slice(0, 19)}Z.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + "\n");
    console.log(JSON.stringify(result, null, 2));
    console.log(`• ${file}`);
    const ok = verdict.attempts_lost === 0 && verdict.duplicate_effects === 0 && verdict.denials_unrecorded === 0;
    // What the gateway said about Settle and its spool (not its per-call lines): where a lost record went.
    if (!ok)
      for (const line of gateway
        .stderr()
        .split("\n")
        .filter((l) => l.startsWith("settle-mcp:"))
        .slice(-30))
        console.log(`  gateway: ${line}`);
    console.log(
      ok
        ? "PASS: 0 attempts lost, 0 duplicate effects"
        : "FAIL: see attempts_lost, duplicate_effects, denials_unrecorded",
    );
    process.exitCode = ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

await main();
