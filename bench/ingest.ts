import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { runBaseline } from "./baseline";
import { measureCpu } from "./cpu";
import { runLoad } from "./load";
import { watchStatements } from "./pg-statements";
import { BEFORE, evaluate, machine, printTable, SHARED_CORES_NOTE, TARGETS, writeReport, type Report } from "./report";
import {
  createBenchDatabase,
  ensureBuild,
  freePort,
  gitHead,
  prepareDatabase,
  releaseOnExit,
  ROOT,
  startServer,
  type BenchDatabase,
  type BenchServer,
} from "./setup";

// `npm run bench:ingest [-- --no-build --duration 20 …]`: builds if needed,
// stands Settle up on its own database, measures ingest over HTTP and a raw
// INSERT baseline, prints a table, writes bench/results/ingest-<date>.json,
// and tears everything down, on failure and Ctrl-C too.
//
// Flags (defaults): --duration 15 and --warmup 3 seconds per phase;
// --batch-connections 8, --single-connections 32; --rate 300 req/s over
// --rate-connections 30 from --rate-staggered 10 autocannon instances;
// --baseline-records 60000; --pool-size (SETTLE_DB_POOL_SIZE for the server).
// BENCH_PG_ADMIN_URL points at another PostgreSQL (default: postgres@127.0.0.1:5432).

const { values: args } = parseArgs({
  options: {
    "no-build": { type: "boolean", default: false },
    duration: { type: "string", default: "15" },
    warmup: { type: "string", default: "3" },
    "batch-connections": { type: "string", default: "8" },
    "single-connections": { type: "string", default: "32" },
    rate: { type: "string", default: "300" },
    "rate-connections": { type: "string", default: "30" },
    "rate-staggered": { type: "string", default: "10" },
    "baseline-records": { type: "string", default: "60000" },
    "pool-size": { type: "string" },
    // npm test: every phase once, at a size that takes seconds; it checks the bench runs, not its figures.
    tiny: { type: "boolean", default: false },
  },
});
if (args.tiny) {
  Object.assign(args, {
    duration: "1",
    warmup: "0",
    "batch-connections": "2",
    "single-connections": "2",
    rate: "20",
    "rate-connections": "2",
    "rate-staggered": "1",
    "baseline-records": "600",
  });
}
const num = (name: keyof typeof args) => {
  const value = Number(args[name]);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number`);
  return value;
};

let server: BenchServer | null = null;
let database: BenchDatabase | null = null;
const cleanup = releaseOnExit(() => ({ server, database }));

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const plan = {
    duration: num("duration"),
    warmup: num("warmup"),
    batchConnections: num("batch-connections"),
    singleConnections: num("single-connections"),
    rate: num("rate"),
    rateConnections: num("rate-connections"),
    rateStaggered: Math.max(1, num("rate-staggered")),
  };
  log(`Settle ingest benchmark — ${SHARED_CORES_NOTE}`);
  log(`• build: ${ensureBuild(args["no-build"] ? "skip" : "auto")}`);

  database = await createBenchDatabase();
  log(`• database ${database.name}`);
  const { key, runtimeId, operatorToken } = await prepareDatabase(database.url);
  const statements = await watchStatements(database.url);
  log(
    `• pg_stat_statements: ${statements.available ? "read per phase" : "not loaded on this server (no per-statement breakdown)"}`,
  );
  const port = await freePort();
  const serverEnv: Record<string, string> = args["pool-size"] ? { SETTLE_DB_POOL_SIZE: String(args["pool-size"]) } : {};
  server = await startServer(database.url, port, serverEnv);
  log(`• next start on ${server.url} (pid ${server.pid})`);

  const idle = measureCpu(server.pid);
  await new Promise((r) => setTimeout(r, args.tiny ? 200 : 2_000));
  const busyBefore = idle()?.machine ?? null;
  log(
    `• machine busy before the run: ${busyBefore ?? "n/a"} of ${machine().cpus} cores${(busyBefore ?? 0) > 0.2 ? " — other processes are running; figures will be low" : ""}`,
  );

  const runId = randomBytes(4).toString("hex");
  const load = await runLoad({ url: server.url, key, serverPid: server.pid, runId }, plan, log, statements);
  await statements.close();
  const visibility = await measureVisibility(server.url, key, operatorToken, runId);
  log(`• ingest → queue visibility: ${visibility ?? "not seen within 10 s"} ms`);

  // The server is idle from here on; stopping it leaves the cores to the baseline alone.
  await server.stop();
  const records = num("baseline-records");
  log(`• raw baseline: ${records} records in batches of 100, ${plan.batchConnections} connections, then 1`);
  const baseline = await runBaseline(database.url, {
    runtimeId,
    runId,
    records,
    connections: plan.batchConnections,
    cpuGroup: server.pid,
  });
  log(`  ${baseline.rows_per_s} rows/s (${plan.batchConnections} connections)`);
  const single = await runBaseline(database.url, {
    runtimeId,
    runId,
    records: Math.ceil(records / 3),
    connections: 1,
    cpuGroup: server.pid,
  });
  log(`  ${single.rows_per_s} rows/s (1 connection)`);

  const ratio = Math.round((load.batched.records_per_s / baseline.rows_per_s) * 1000) / 1000;
  const singleRatio = Math.round((load.single.req_per_s / load.health.req_per_s) * 1000) / 1000;
  const report: Report = {
    date: new Date().toISOString(),
    git: gitHead(),
    machine: machine(),
    machine_busy_before: busyBefore,
    // SETTLE_FAST_LANE=off in the environment reaches the server: every request through Next.js (decision 024).
    settings: {
      ...plan,
      records_per_batch: 100,
      baseline_records: records,
      pool_size: args["pool-size"] ?? "default (SETTLE_DB_POOL_SIZE)",
      fast_lane: process.env.SETTLE_FAST_LANE !== "off",
    },
    ...load,
    baseline,
    baseline_single_connection: single,
    ratio_batched_to_baseline: ratio,
    ratio_single_to_health: singleRatio,
    visibility_ms: visibility,
    statements_available: statements.available,
    before: BEFORE,
    targets: TARGETS,
    met: {},
  };
  report.met = evaluate(report);
  printTable(report);
  log(`\nFigures written to ${writeReport(ROOT, report)}`);
}

/** From sending a record with an unknown outcome to seeing its invocation in the queue API, as an operator would. */
async function measureVisibility(url: string, key: string, token: string, runId: string): Promise<number | null> {
  const id = `${runId}-visible`;
  const started = performance.now();
  const sent = await fetch(`${url}/api/v1/envelopes`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({
      event_id: id,
      task_id: `${runId}-visible-task`,
      invocation_id: id,
      tool: "charge_card",
      effect_class: "money",
      attempt: 1,
      envelope: { ok: false, commit_state: "unknown", next_action: "verify_operation" },
    }),
  });
  if (sent.status !== 207) return null;
  while (performance.now() - started < 10_000) {
    const res = await fetch(`${url}/api/v1/queue?q=${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const page = (await res.json()) as { items?: Array<{ invocation_id: string }> };
    if (page.items?.some((i) => i.invocation_id === id)) return Math.round(performance.now() - started);
    await new Promise((r) => setTimeout(r, 25));
  }
  return null;
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
