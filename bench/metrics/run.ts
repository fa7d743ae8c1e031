import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { closeDb, getDb } from "@/lib/db/client";
import { refreshMetricRollups } from "@/lib/metrics/rollup";
import { createPersonalToken } from "@/lib/identity/personal-tokens";
import { createUser } from "@/lib/identity/users";
import { setEnv } from "@/lib/env";
import { createBenchDatabase, ensureBuild, freePort, migrateDatabase, resultsDir, ROOT, startServer } from "../setup";
import { generateMetricsWorkload } from "./generate";
import { DEFAULT_WORKLOAD } from "../console/generate";

// `npm run bench:metrics`: GET /api/v1/metrics over 250,000 invocations and
// ~1,000,000 attempts in a fresh PostgreSQL database, for 24-hour and 30-day
// ranges, with and without filters. Target: under 300 ms.
//
// --mode http (default): `next start` on the built app, requests over HTTP.
// --mode in-process: the route handler called directly (auth, parsing, the
//   queries, JSON), without building the app.
// --keep: leave the database (its URL is printed) for EXPLAIN sessions.

const { values: args } = parseArgs({
  options: {
    mode: { type: "string", default: "http" },
    runs: { type: "string", default: "20" },
    keep: { type: "boolean", default: false },
    url: { type: "string" },
    // The generated workload's size (npm test's smoke run makes a small one).
    invocations: { type: "string", default: String(DEFAULT_WORKLOAD.invocations) },
    // --no-rollups: time the raw path (the job never ran).
    rollups: { type: "boolean", default: true },
  },
  allowNegative: true,
});
const RUNS = Number(args.runs);
const TARGET_MS = 300;
const AUTH_SECRET = randomBytes(24).toString("base64url");

type Scenario = { name: string; query: string };

function scenarios(now: Date, tool: string, runtime: string): Scenario[] {
  const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
  const day = ago(86_400_000);
  const month = ago(30 * 86_400_000);
  const to = now.toISOString();
  return [
    { name: "24h", query: `from=${day}&to=${to}` },
    { name: "24h, tool", query: `from=${day}&to=${to}&tool=${tool}` },
    { name: "24h, runtime", query: `from=${day}&to=${to}&runtime=${runtime}` },
    { name: "30d", query: `from=${month}&to=${to}` },
    { name: "30d, tool", query: `from=${month}&to=${to}&tool=${tool}` },
    { name: "30d, runtime", query: `from=${month}&to=${to}&runtime=${runtime}` },
    { name: "30d, tool + runtime", query: `from=${month}&to=${to}&tool=${tool}&runtime=${runtime}` },
    { name: "30d, CSV", query: `from=${month}&to=${to}&format=csv` },
  ].map((s) => ({ ...s, query: s.query.replace(/\+/g, "%2B") }));
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

async function counts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Record<string, number> = {};
    for (const table of [
      "invocations",
      "attempts",
      "invocation_transitions",
      "invocation_actions",
      "guard_checks",
      "queue_samples",
    ]) {
      out[table] = Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    }
    return out;
  } finally {
    await client.end();
  }
}

async function rollupCounts(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM metric_hours) AS hours, (SELECT count(*) FROM metric_episodes) AS episodes,
              (SELECT rolled_before FROM metric_rollup_state WHERE id = 1) AS rolled_before`,
    );
    const r = rows[0];
    return `metric_hours ${Number(r.hours).toLocaleString("en")} rows, metric_episodes ${Number(r.episodes).toLocaleString("en")} rows, rolled up before ${new Date(r.rolled_before).toISOString()}`;
  } finally {
    await client.end();
  }
}

async function main() {
  const database = args.url ? null : await createBenchDatabase();
  const url = args.url ?? database!.url;
  let stopServer = async () => {};
  try {
    if (database) {
      console.log(`• database ${database.name}: migrating and generating …`);
      await migrateDatabase(url);
      const started = Date.now();
      await generateMetricsWorkload(url, console.log, { ...DEFAULT_WORKLOAD, invocations: Number(args.invocations) });
      console.log(`  generated in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    } else await migrateDatabase(url);
    const rows = await counts(url);
    console.log(
      `• ${Object.entries(rows)
        .map(([t, n]) => `${t} ${n.toLocaleString("en")}`)
        .join(", ")}`,
    );

    setEnv({ DATABASE_URL: url, NODE_ENV: "production", SETTLE_DATA_DIR: undefined, SETTLE_AUTH_SECRET: AUTH_SECRET });
    const db = await getDb();
    const { user } = await createUser(db, {
      email: `bench-${Date.now()}@example.com`,
      role: "manager",
      password: "correct horse battery",
    });
    const { token } = await createPersonalToken(db, user.id, "bench");
    if (args.rollups) {
      // What the metrics-rollup job does in the background, here up front and timed.
      const rolling = Date.now();
      const run = await refreshMetricRollups(db, 3_600_000);
      const rolled = await rollupCounts(url);
      console.log(
        `• rollups (the job's first run): ${run.steps} steps in ${((Date.now() - rolling) / 1000).toFixed(1)} s; ${rolled}`,
      );
    }
    await closeDb();

    let fetchMetrics: (query: string) => Promise<{ status: number; body: string }>;
    if (args.mode === "in-process") {
      const { GET } = await import("@/app/api/v1/metrics/route");
      fetchMetrics = async (query) => {
        const res = await GET(
          new Request(`http://bench.local/api/v1/metrics?${query}`, { headers: { authorization: `Bearer ${token}` } }),
        );
        return { status: res.status, body: await res.text() };
      };
    } else {
      const distDir = process.env.SETTLE_NEXT_DIST_DIR ?? ".next";
      console.log(`• build (${distDir}): ${ensureBuild("auto", distDir)}`);
      const server = await startServer(url, await freePort(), {
        SETTLE_BACKGROUND_JOBS: "off",
        SETTLE_NEXT_DIST_DIR: distDir,
        NODE_ENV: "production",
        SETTLE_AUTH_SECRET: AUTH_SECRET,
      });
      stopServer = server.stop;
      fetchMetrics = async (query) => {
        const res = await fetch(`${server.url}/api/v1/metrics?${query}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return { status: res.status, body: await res.text() };
      };
    }

    const results: Array<{ scenario: string; p50: number; p95: number; max: number; runs: number }> = [];
    const now = new Date();
    for (const s of scenarios(now, "charge_card", "billing-agent")) {
      const times: number[] = [];
      let sample = "";
      for (let i = 0; i < RUNS + 3; i += 1) {
        const started = performance.now();
        const res = await fetchMetrics(s.query);
        const ms = performance.now() - started;
        if (res.status !== 200) throw new Error(`${s.name}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
        if (i >= 3) times.push(ms);
        sample = res.body;
      }
      times.sort((a, b) => a - b);
      const row = {
        scenario: s.name,
        p50: quantile(times, 0.5),
        p95: quantile(times, 0.95),
        max: times[times.length - 1]!,
        runs: times.length,
      };
      results.push(row);
      const headline = s.name.includes("CSV") ? `${sample.split("\r\n").length - 2} rows` : summary(JSON.parse(sample));
      console.log(
        `  ${s.name.padEnd(20)} p50 ${row.p50.toFixed(0).padStart(4)} ms  p95 ${row.p95.toFixed(0).padStart(4)} ms  max ${row.max.toFixed(0).padStart(4)} ms   ${headline}`,
      );
    }
    const worst = Math.max(...results.map((r) => r.p95));
    console.log(
      `• worst p95 ${worst.toFixed(0)} ms: ${worst < TARGET_MS ? "meets" : "MISSES"} the ${TARGET_MS} ms target (${args.mode})`,
    );
    const dir = resultsDir();
    const file = path.join(dir, `metrics-${new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19)}Z.json`);
    writeFileSync(file, `${JSON.stringify({ mode: args.mode, rollups: args.rollups, rows, results }, null, 2)}\n`);
    console.log(`• ${path.relative(ROOT, file)}`);
  } finally {
    await stopServer();
    await closeDb();
    if (database && !args.keep) await database.drop();
    else if (database) console.log(`• kept ${url}`);
  }
}

function summary(m: {
  duplicates_prevented: { total: number };
  unknown_outcomes: { total: number; open: number };
  possible_duplicate_effects: number;
  invocations: number;
}): string {
  return `invocations ${m.invocations}, duplicates prevented ${m.duplicates_prevented.total}, unknown ${m.unknown_outcomes.total} (open ${m.unknown_outcomes.open}), possible duplicates ${m.possible_duplicate_effects}`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
