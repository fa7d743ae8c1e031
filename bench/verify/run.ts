import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
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

// `npm run bench:verify [-- --unknowns 10000 --rate 100 --answer-ms 50 --window 10 --no-build]`: Settle under `npm start`
// (background jobs every second) on its own database; a catalog entry gives create_refund a verifier (after_s 1);
// workers of @settle/client answer every ask "found" after --answer-ms. Measured side by side in one run:
// - --unknowns unknown outcomes of create_refund arriving at --rate per second; for each, the time from its
//   unknown outcome to its settlement by the verifier (p50, p95);
// - ingest at full speed of other records (create_note) for --window seconds beside that stream, and beside the
//   same stream of unknowns of a tool without a verifier (create_payment) before and after it: the verifier's
//   added load on ingest is the rate beside the verified stream over the mean of the rates beside the others.
//   (--window must be shorter than the stream, unknowns / rate seconds.)
// Targets: p95 ≤ after_s + 2 s; ingest during verification ≥ 90 % of without.
// `--tiny` (npm test) runs 200 unknowns and fails only if one is not settled by the verifier.

const { values: args } = parseArgs({
  options: {
    "no-build": { type: "boolean", default: false },
    tiny: { type: "boolean", default: false },
    unknowns: { type: "string", default: "10000" },
    rate: { type: "string", default: "100" },
    "answer-ms": { type: "string", default: "50" },
    workers: { type: "string", default: "4" },
    concurrency: { type: "string", default: "20" },
    batch: { type: "string", default: "100" },
    senders: { type: "string", default: "4" },
    window: { type: "string", default: "10" },
  },
});
const num = (name: keyof typeof args) => Number(args[name]);
const AFTER_S = 1;

let server: BenchServer | null = null;
let database: BenchDatabase | null = null;
const cleanup = releaseOnExit(() => ({ server, database }));

const unknownOutcome = (tool: string, id: string) => ({
  event_id: `${id}:out`,
  task_id: `task-${id}`,
  invocation_id: id,
  attempt: 1,
  tool,
  effect_class: tool === "create_refund" ? "money" : "create",
  idempotency_key: `key-${id}`,
  arguments: { amount: 100, charge: `ch_${id}` },
  at: new Date().toISOString(),
  envelope: { title: "Gateway Timeout", status: 504 },
});

async function post(url: string, key: string, records: object[]): Promise<void> {
  const res = await fetch(`${url}/api/v1/envelopes`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ records }),
  });
  const body = (await res.json()) as { accepted?: number };
  if (body.accepted !== records.length) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(body)}`);
}

/** Sends unknown outcomes of `tool` in batches from `senders` concurrent loops for `seconds`; records per second. */
async function ingestFor(url: string, key: string, tool: string, prefix: string, seconds: number): Promise<number> {
  const batch = num("batch");
  let sent = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: num("senders") }, async () => {
      while (performance.now() < until) {
        const from = sent;
        sent += batch;
        await post(
          url,
          key,
          Array.from({ length: batch }, (_, i) => unknownOutcome(tool, `${prefix}-${from + i}`)),
        );
      }
    }),
  );
  return sent / ((performance.now() - started) / 1000);
}

/** Sends `count` unknown outcomes of `tool` at `rate` per second, ten sends a second. */
async function stream(
  url: string,
  key: string,
  tool: string,
  count: number,
  rate: number,
  prefix = "verified",
): Promise<void> {
  const perTick = Math.max(1, Math.round(rate / 10));
  const started = Date.now();
  for (let sent = 0, tick = 0; sent < count; tick += 1) {
    const size = Math.min(perTick, count - sent);
    await post(
      url,
      key,
      Array.from({ length: size }, (_, i) => unknownOutcome(tool, `${prefix}-${sent + i}`)),
    );
    sent += size;
    const wait = started + (tick + 1) * 100 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function main(): Promise<void> {
  const tiny = args.tiny;
  const unknowns = tiny ? 200 : num("unknowns");
  console.log(`• build: ${ensureBuild(args["no-build"] ? "skip" : "auto")}`);
  database = await createBenchDatabase();
  const { key, runtimeId } = await prepareDatabase(database.url);
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  await sql.query(
    `INSERT INTO tool_catalog_entries (id, runtime_id, pattern, effect_class, verify, created_at, updated_at)
     VALUES (gen_random_uuid(), $1::uuid, 'create_refund', 'money', $2::jsonb, now(), now())`,
    [runtimeId, JSON.stringify({ after_s: AFTER_S, every_s: 5, max_tries: 5, absent_after_s: 1, lease_s: 30 })],
  );
  server = await startServer(database.url, await freePort(), { SETTLE_JOBS_INTERVAL_S: "1" });
  console.log(`• Settle at ${server.url}; ${unknowns} verified unknowns at ${tiny ? 200 : num("rate")}/s`);

  // The verifier workers run in a process of their own (bench/verify/worker.ts), as a runtime's would.
  const worker = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      path.join(import.meta.dirname, "worker.ts"),
      JSON.stringify({
        url: server.url,
        key,
        workers: num("workers"),
        concurrency: num("concurrency"),
        answerMs: num("answer-ms"),
      }),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let workerOutput = "";
  worker.stdout.on("data", (d) => (workerOutput += d));
  const workerExited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));

  // Warm-up: the server's first requests compile and plan; no phase should pay for them.
  const window = tiny ? 1 : num("window");
  const rate = tiny ? 200 : num("rate");
  const lead = tiny ? 200 : 2_000;
  /** Ingest at full speed for the window, beside a stream of unknowns of `tool` at the same rate. */
  const besideStream = async (tool: string, count: number, prefix: string) => {
    const streamed = stream(server!.url, key, tool, count, rate, prefix);
    await new Promise((r) => setTimeout(r, lead));
    const measured = await ingestFor(server!.url, key, "create_note", `plain-${prefix}`, window);
    await streamed;
    return measured;
  };
  // The same stream without a verifier (create_payment has no catalog entry): what the verifier adds is the rest.
  const plainCount = Math.ceil(rate * (window + (lead * 2) / 1000));
  await ingestFor(server.url, key, "create_note", "warm", 1);
  const without1 = await besideStream("create_payment", plainCount, "unverified-a");
  const verifiedStart = Date.now();
  const withVerifier = await besideStream("create_refund", unknowns, "verified");
  const deadline = Date.now() + Math.max(60_000, unknowns * 20);
  let settled = 0;
  while (Date.now() < deadline) {
    const [row] = (
      await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM verification_requests WHERE state = 'settled'`)
    ).rows;
    settled = row!.n;
    if (settled >= unknowns) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  worker.kill("SIGTERM");
  await workerExited;
  const answered = Number(/answered (\d+)/.exec(workerOutput)?.[1] ?? 0);
  const without2 = await besideStream("create_payment", plainCount, "unverified-b");
  const without = (without1 + without2) / 2;
  const waits = (
    await sql.query<{ s: number }>(
      `SELECT extract(epoch FROM t.at - i.first_seen_at)::float8 AS s
         FROM invocation_transitions t JOIN invocations i ON i.id = t.invocation_uid
        WHERE i.tool = 'create_refund' AND t.to_status = 'reconciled' AND t.resolution_by = 'probe'`,
    )
  ).rows
    .map((r) => r.s)
    .sort((a, b) => a - b);
  // Where the time goes: scheduled (the request row), taken (its first answer's try began ≈ lease), answered.
  const [stages] = (
    await sql.query<{ scheduled: number; answered: number; first_seen_lag: number }>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM v.created_at - i.first_seen_at))::float8 AS scheduled,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM (v.answers -> 0 ->> 'at')::timestamptz - i.first_seen_at))::float8 AS answered,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.received_at - a.at))::float8 AS first_seen_lag
         FROM verification_requests v JOIN invocations i ON i.id = v.invocation_uid
         JOIN attempts a ON a.invocation_uid = i.id AND a.phase = 'outcome'`,
    )
  ).rows;
  await sql.end();

  const p50 = quantile(waits, 0.5);
  const p95 = quantile(waits, 0.95);
  const share = withVerifier / without;
  const report = {
    at: new Date().toISOString(),
    commit: gitHead(),
    unknowns,
    answer_ms: num("answer-ms"),
    rate_per_s: tiny ? 200 : num("rate"),
    ingest_window_s: window,
    after_s: AFTER_S,
    settled_by_verifier: waits.length,
    requests_settled: settled,
    answered,
    unknown_to_settled_s: { p50, p95 },
    median_stages_s: stages,
    ingest_records_per_s: {
      before: Math.round(without1),
      during_verification: Math.round(withVerifier),
      after: Math.round(without2),
    },
    ingest_with_over_without: Math.round(share * 1000) / 1000,
    targets: { p95_max_s: AFTER_S + 2, ingest_share_min: 0.9 },
    met: { p95: p95 !== null && p95 <= AFTER_S + 2, ingest: share >= 0.9 },
    seconds: Math.round((Date.now() - verifiedStart) / 1000),
  };
  console.log(JSON.stringify(report, null, 2));
  writeFileSync(
    path.join(resultsDir(), `verify-${report.at.replace(/[:.]/g, "-").slice(0, 19)}Z.json`),
    JSON.stringify(report, null, 2),
  );
  if (waits.length !== unknowns)
    throw new Error(`only ${waits.length} of ${unknowns} unknowns were settled by the verifier`);
  // Each settled request keeps the answer that settled it (a request closed under its answer would lose it).
  if (settled !== unknowns) throw new Error(`only ${settled} of ${unknowns} verification requests are settled`);
}

main()
  .then(() => cleanup())
  .catch(async (error) => {
    console.error(error);
    await cleanup();
    process.exit(1);
  });
