import { randomBytes } from "node:crypto";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { closeDb, getDb } from "@/lib/db/client";
import { createPersonalToken } from "@/lib/identity/personal-tokens";
import { createUser } from "@/lib/identity/users";
import { setEnv } from "@/lib/env";
import { measureCpu } from "../cpu";
import { machine, SHARED_CORES_NOTE } from "../report";
import {
  createBenchDatabase,
  ensureBuild,
  freePort,
  gitHead,
  migrateDatabase,
  releaseOnExit,
  ROOT,
  startServer,
  type BenchDatabase,
  type BenchServer,
} from "../setup";
import { checkWorkload } from "./check";
import { compareWithIndex, explain, queueStatements } from "./explain";
import { measureFirstLoad } from "./first-load";
import { BIG_TASK, DEFAULT_WORKLOAD, generateWorkload } from "./generate";
import { measureGet, type GetResult, type Target } from "./http";
import { evaluate, printTable, writeReport, type ConsoleReport } from "./report";

// `npm run bench:console [-- --no-build --duration 8 …]`: builds into its own
// folder if needed, fills a fresh PostgreSQL database with 250,000
// invocations and a million attempts, checks that they fold to their stored
// state, explains the queue's SQL with and without its index, starts
// `next start`, signs an operator in, and measures the queue and task API and
// pages with autocannon, and the queue page's first-load JavaScript. Prints a
// table, writes bench/results/console-<date>.json, and tears everything down,
// on failure and Ctrl-C too.
//
// Flags (defaults): --duration 8 and --warmup 2 seconds per measurement, at
// --connections 1,4 (the targets are judged at the first: one request at a time,
// the latency an operator sees; the second shows the server under load); --invocations 250000;
// --dist-dir .next-bench; --only <text> measures only the targets whose label holds it (`--only task`),
// and skips the EXPLAINs.
// BENCH_PG_ADMIN_URL points at another PostgreSQL.

const { values: args } = parseArgs({
  options: {
    "no-build": { type: "boolean", default: false },
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "1,4" },
    invocations: { type: "string", default: String(DEFAULT_WORKLOAD.invocations) },
    "dist-dir": { type: "string", default: ".next-bench" },
    only: { type: "string", default: "" },
  },
});
const positive = (value: string | undefined, name: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
};

// A q an operator would paste: part of a task id (11 tasks, 44 invocations match).
const SEARCH = "task-6123";
// And one that matches 44% of all invocations, which no index narrows.
const BROAD = "inv-1";
const OPERATOR = { email: "bench-operator@example.com", password: randomBytes(18).toString("base64url") };

let server: BenchServer | null = null;
let database: BenchDatabase | null = null;
const cleanup = releaseOnExit(() => ({ server, database }));

async function counts(url: string): Promise<Omit<ConsoleReport["data"], "generate_s" | "fold_checked">> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM invocations)::int AS invocations, (SELECT count(*) FROM attempts)::int AS attempts,
              (SELECT count(*) FROM invocation_actions)::int AS actions, (SELECT count(*) FROM tasks)::int AS tasks,
              (SELECT count(*) FROM invocations WHERE status IN ('outcome_unknown', 'partially_applied', 'awaiting_approval', 'verifying', 'escalated')
                  OR (status = 'pending' AND stall_at <= now()))::int AS in_queue,
              (SELECT count(*) FROM attempts a JOIN invocations i ON i.id = a.invocation_uid WHERE i.task_id = $1)::int AS big_task_attempts`,
      [BIG_TASK],
    );
    return rows[0];
  } finally {
    await client.end();
  }
}

/** The operator the benchmark signs in as, and a personal access token for the API. */
async function createOperator(url: string, secret: string): Promise<string> {
  setEnv({ DATABASE_URL: url, NODE_ENV: "production", SETTLE_AUTH_SECRET: secret });
  const db = await getDb();
  try {
    const { user } = await createUser(db, { ...OPERATOR, role: "operator" });
    return (await createPersonalToken(db, user.id, "bench")).token;
  } finally {
    await closeDb();
  }
}

async function signIn(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: baseUrl },
    body: JSON.stringify(OPERATOR),
  });
  const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token"));
  if (res.status !== 200 || !cookie) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return cookie.split(";")[0]!;
}

async function explainQueries(url: string): Promise<ConsoleReport["explain"]> {
  const indexes = [
    await compareWithIndex(url, "invocations_queue_order_idx", ""),
    await compareWithIndex(url, "invocation_search_ids_trgm_idx", `status=all&q=${SEARCH}`),
  ];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const queries: ConsoleReport["explain"]["queries"] = [];
    for (const search of [
      "runtime=billing-agent&effect_class=money,destructive",
      "status=all",
      `q=${SEARCH}`,
      `status=all&q=${BROAD}`,
    ]) {
      const { page, count } = await queueStatements(client, search);
      queries.push({ query: search, statement: "page", plan: await explain(client, page) });
      queries.push({ query: search, statement: "count", plan: await explain(client, count) });
    }
    return { indexes, queries };
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const duration = positive(args.duration, "duration");
  const warmup = Number(args.warmup);
  const connections = args.connections.split(",").map((c) => positive(c, "connections"));
  const invocations = positive(args.invocations, "invocations");
  const distDir = args["dist-dir"];
  log(`Settle console benchmark — ${SHARED_CORES_NOTE}`);
  log(`• build (${distDir}): ${ensureBuild(args["no-build"] ? "skip" : "auto", distDir)}`);

  database = await createBenchDatabase();
  log(`• database ${database.name}`);
  await migrateDatabase(database.url);
  const started = Date.now();
  await generateWorkload(database.url, { ...DEFAULT_WORKLOAD, invocations }, log);
  const generateS = Math.round((Date.now() - started) / 100) / 10;
  const foldChecked = await checkWorkload(database.url);
  const data = { ...(await counts(database.url)), generate_s: generateS, fold_checked: foldChecked };
  log(
    `• ${data.invocations} invocations, ${data.attempts} attempts in ${generateS} s; ${foldChecked} sampled invocations fold to their stored state`,
  );

  // --only measures some pages or APIs: the queue's plans are then not what is asked for.
  if (!args.only) log("• EXPLAIN (ANALYZE, BUFFERS) of the queue's SQL");
  const explained = args.only ? { indexes: [], queries: [] } : await explainQueries(database.url);

  const secret = randomBytes(32).toString("hex");
  const token = await createOperator(database.url, secret);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  server = await startServer(database.url, port, {
    SETTLE_NEXT_DIST_DIR: distDir,
    SETTLE_AUTH_SECRET: secret,
    SETTLE_PUBLIC_URL: baseUrl,
  });
  log(`• next start on ${server.url} (pid ${server.pid})`);
  const cookie = await signIn(baseUrl);

  const page = await fetch(`${baseUrl}/`, { headers: { cookie } });
  const html = await page.text();
  if (page.status !== 200 || !html.includes("inv-"))
    throw new Error(`the queue page did not render its rows (${page.status})`);
  const firstLoad = measureFirstLoad(html, path.join(ROOT, distDir));
  log(`• first-load JS of /: ${firstLoad.files.length} files, ${(firstLoad.gzip_bytes / 1000).toFixed(1)} kB gzipped`);

  const api = { authorization: `Bearer ${token}` };
  const browser = { cookie };
  const allTargets: Target[] = [
    { label: "queue API, default", path: "/api/v1/queue", headers: api, kind: "api" },
    {
      label: "queue API, filtered",
      path: "/api/v1/queue?runtime=billing-agent&effect_class=money,destructive",
      headers: api,
      kind: "api",
    },
    { label: "queue API, status=all", path: "/api/v1/queue?status=all", headers: api, kind: "api" },
    { label: "queue API, search", path: `/api/v1/queue?q=${SEARCH}`, headers: api, kind: "api" },
    { label: "queue API, all + search", path: `/api/v1/queue?status=all&q=${SEARCH}`, headers: api, kind: "api" },
    { label: "queue API, all + broad search", path: `/api/v1/queue?status=all&q=${BROAD}`, headers: api, kind: "api" },
    { label: "queue page", path: "/", headers: browser, kind: "page" },
    { label: "queue page, all + search", path: `/?status=all&q=${SEARCH}`, headers: browser, kind: "page" },
    { label: "task API (100 invocations)", path: `/api/v1/tasks/${BIG_TASK}`, headers: api, kind: "api" },
    { label: "task page (1,000 attempts)", path: `/tasks/${BIG_TASK}`, headers: browser, kind: "page" },
    // What the task page loads after it renders: the story's first 150 events.
    {
      label: "task timeline API (first 150 events)",
      path: `/api/v1/tasks/${BIG_TASK}/timeline?limit=150`,
      headers: api,
      kind: "api",
    },
  ];
  const targets = allTargets.filter((t) => t.label.includes(args.only));
  for (const t of targets.filter((x) => x.kind === "page")) {
    // What a browser downloads: the HTML with the RSC payload inlined in it.
    const bytes = (await (await fetch(`${baseUrl}${t.path}`, { headers: t.headers })).arrayBuffer()).byteLength;
    log(`• ${t.label}: ${(bytes / 1000).toFixed(1)} kB of HTML`);
  }

  const idle = measureCpu(server.pid);
  await new Promise((r) => setTimeout(r, 2_000));
  const busyBefore = idle()?.machine ?? null;
  log(
    `• machine busy before the run: ${busyBefore ?? "n/a"} of ${machine().cpus} cores${(busyBefore ?? 0) > 0.2 ? " — other processes are running; figures will be high" : ""}`,
  );

  const results: GetResult[] = [];
  for (const target of targets) {
    for (const c of connections) {
      if (warmup > 0) await measureGet(baseUrl, target, { connections: c, duration: warmup, serverPid: server.pid });
      const result = await measureGet(baseUrl, target, { connections: c, duration, serverPid: server.pid });
      log(
        `  ${target.label} (${c} conn.): p50 ${result.latency_ms.p50} ms, p95 ${result.latency_ms.p95} ms, p99 ${result.latency_ms.p99} ms, ${result.req_per_s} req/s`,
      );
      results.push(result);
    }
  }

  const report: ConsoleReport = {
    date: new Date().toISOString(),
    git: gitHead(),
    machine: machine(),
    machine_busy_before: busyBefore,
    settings: { duration, warmup, connections, invocations, dist_dir: distDir, search: SEARCH, broad_search: BROAD },
    data,
    first_load_js: firstLoad,
    explain: explained,
    results,
    judged_at_connections: connections[0]!,
    met: {},
  };
  report.met = evaluate(report);
  printTable(report);
  log(`\nFigures written to ${writeReport(ROOT, report)}`);
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
