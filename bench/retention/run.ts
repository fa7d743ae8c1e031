import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import type { Db } from "@/lib/db/client";
import { createPostgresDriver } from "@/lib/db/driver";
import { PrismaClient } from "@/lib/db/generated/client";
import { ingestRecords } from "@/lib/ingest/process-batch";
import { getTask } from "@/lib/invocations/read";
import { listQueue } from "@/lib/queue/queue";
import { queueQuerySchema } from "@/lib/queue/schemas";
import { makePartition } from "@/lib/retention/partitions";
import { applyRetention } from "@/lib/retention/retire";
import { addMonths, partitionName, shelfEnd, shelfOf, shelvedTables } from "@/lib/retention/shelves";
import { BIG_TASK, DEFAULT_WORKLOAD, generateWorkload } from "../console/generate";
import { createBenchDatabase, gitHead, migrateDatabase, resultsDir, type BenchDatabase } from "../setup";

// `npm run bench:retention [-- --attempts 10000000 --first 1000000]`: a year of attempts in month partitions, in a
// fresh PostgreSQL database (the console's workload, first seen over 365 days). Measured side by side in one run:
// - the console's queue (first page) and a 1,000-attempt task, p95 at --first attempts and again at --attempts
//   (target: within 1.5×);
// - ingest (in process, batches of 200 records) into the partitioned table and into a copy of the same database
//   whose month-partitioned tables are plain ones, batches alternating (target: the partitioned rate within 10 %);
// - retiring the oldest month (retention: archive, then detach and drop) against a DELETE of the next month's
//   rows, in time and WAL.
// `--tiny` (npm test) runs a few thousand attempts and checks only that every step completes.

const { values: args } = parseArgs({
  options: {
    tiny: { type: "boolean", default: false },
    attempts: { type: "string", default: "10000000" },
    first: { type: "string", default: "1000000" },
    runs: { type: "string", default: "200" },
    batches: { type: "string", default: "60" },
    // Leave the database (its URL is printed) for EXPLAIN sessions.
    keep: { type: "boolean", default: false },
  },
});
const tiny = args.tiny;
const ATTEMPTS = tiny ? 40_000 : Number(args.attempts);
const FIRST = tiny ? 8_000 : Number(args.first);
const RUNS = tiny ? 3 : Number(args.runs);
const BATCHES = tiny ? 4 : Number(args.batches);
// The workload has ~4 records per invocation (DEFAULT_WORKLOAD: 250,000 invocations, 1,000,404 records).
const PER_INVOCATION = 1_000_404 / DEFAULT_WORKLOAD.invocations;

const databases: BenchDatabase[] = [];
const handles: Db[] = [];
const archiveDir = mkdtempSync(path.join(tmpdir(), "settle-bench-archive-"));

function openDb(url: string): Db {
  const driver = createPostgresDriver(url, 4);
  return { driver, prisma: new PrismaClient({ adapter: new PrismaPg(driver.pool!) }) };
}

const p95 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.95) - 1]!;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Kilobytes the kernel still has to write back (Dirty + Writeback in /proc/meminfo; 0 where there is none). */
function unwrittenKb(): number {
  try {
    const info = readFileSync("/proc/meminfo", "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(info)?.[1] ?? 0);
    return kb("Dirty") + kb("Writeback");
  } catch {
    return 0;
  }
}

/**
 * Lets the database come to rest after a bulk load, as a production database is between loads: a checkpoint,
 * then until no autovacuum worker is busy and the kernel has written the load back (at most two minutes each).
 * Measured right after the load, the reads compete with the checkpointer, autovacuum and writeback for the two
 * cores and the disk, and the ratio measures those instead.
 */
async function settle(db: Db): Promise<number> {
  const started = performance.now();
  const pause = () => new Promise((resolve) => setTimeout(resolve, 2000));
  await db.driver.query(`CHECKPOINT`).catch(() => {});
  for (let waited = 0; waited < 120; waited += 2) {
    const [busy] = await db.driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`,
    );
    if (!busy?.n) break;
    await pause();
  }
  for (let waited = 0; waited < 120 && unwrittenKb() > 64 * 1024; waited += 2) await pause();
  return round((performance.now() - started) / 1000);
}

/** The console's two reads: the queue's first page (everyone's) and the long task's page, p95 over RUNS each. */
async function consoleP95(db: Db): Promise<{ queue_ms: number; task_ms: number; settled_s: number }> {
  const settled_s = await settle(db);
  const queue: number[] = [];
  const task: number[] = [];
  for (let i = 0; i < RUNS + 10; i += 1) {
    const q = await timed(() => listQueue(db, queueQuerySchema.parse({ limit: "50" }), { scope: {}, now: new Date() }));
    const t = await timed(() => getTask(db, {}, BIG_TASK, { runtime: "billing-agent" }));
    if (i >= 10) {
      queue.push(q);
      task.push(t);
    }
  }
  return { queue_ms: round(p95(queue)), task_ms: round(p95(task)), settled_s };
}

async function count(db: Db): Promise<number> {
  const [row] = await db.driver.query<{ n: string }>(`SELECT count(*)::text AS n FROM attempts`);
  return Number(row!.n);
}

/** Makes every month of the year behind us (and this one) before the rows arrive, as the retention job would have. */
async function makeYear(db: Db, now: Date) {
  for (let m = -13; m <= 0; m += 1) await makePartition(db.driver, "attempts", addMonths(shelfOf(now), m));
}

async function fill(db: Db, url: string, attempts: number, first: number, bigTask: boolean) {
  const invocations = Math.round(attempts / PER_INVOCATION);
  const started = performance.now();
  await generateWorkload(
    url,
    {
      invocations,
      bigTaskInvocations: bigTask ? DEFAULT_WORKLOAD.bigTaskInvocations : 0,
      bigTaskAttemptsEach: DEFAULT_WORKLOAD.bigTaskAttemptsEach,
      first,
      spreadDays: 365,
    },
    () => {},
  );
  console.log(
    `• ${(await count(db)).toLocaleString("en")} attempts (${invocations.toLocaleString("en")} invocations added in ${round((performance.now() - started) / 1000)} s)`,
  );
  return invocations;
}

/**
 * The same database with every month-partitioned table (attempts, transitions, guard answers) as one plain table,
 * with the same key and indexes: the write path's statement works on it unchanged.
 */
async function flatten(db: Db) {
  for (const { table } of shelvedTables) {
    const [pkey] = await db.driver.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`,
      [table],
    );
    const indexes = await db.driver.query<{ def: string }>(
      `SELECT indexdef AS def FROM pg_indexes WHERE tablename = $1 AND indexname <> $2`,
      [table, `${table}_pkey`],
    );
    const sequences = await db.driver.query<{ name: string }>(
      `SELECT s.relname AS name FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
        WHERE d.refobjid = $1::regclass AND s.relkind = 'S' AND d.deptype = 'a'`,
      [table],
    );
    // An id sequence must outlive the partitioned table it belongs to.
    for (const { name } of sequences) await db.driver.exec(`ALTER SEQUENCE "${name}" OWNED BY NONE`);
    await db.driver.exec(`
      CREATE TABLE ${table}_flat (LIKE ${table} INCLUDING DEFAULTS);
      INSERT INTO ${table}_flat SELECT * FROM ${table};
      DROP TABLE ${table};
      ALTER TABLE ${table}_flat RENAME TO ${table};
      ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey ${pkey!.def};
      ${indexes.map((i) => `${i.def.replace(" ON ONLY ", " ON ")};`).join("\n")}`);
    await db.driver.query(`VACUUM ANALYZE ${table}`);
  }
}

const batchOf = (tag: string, n: number) =>
  Array.from({ length: 100 }, (_, i) => {
    const id = `ingest-${tag}-${n}-${i}`;
    const at = new Date().toISOString();
    const base = {
      task_id: `task-${tag}-${n}`,
      invocation_id: id,
      tool: "create_invoice",
      effect_class: "create",
      attempt: 1,
      at,
    };
    return [
      { ...base, event_id: `${id}:i`, phase: "intent" },
      { ...base, event_id: `${id}:o`, phase: "outcome", envelope: { outcome: "ok", effect_applied: "yes" } },
    ];
  }).flat();

/** Records per second into each database, batches alternating between them so both see the same machine. */
async function ingestSideBySide(parted: Db, flat: Db): Promise<{ partitioned: number; plain: number }> {
  const runtimeOf = async (db: Db) => {
    const [r] = await db.driver.query<{ id: string; name: string }>(
      `SELECT id::text, name FROM runtimes WHERE name = 'billing-agent'`,
    );
    return r!;
  };
  const targets = [
    { db: parted, runtime: await runtimeOf(parted), ms: 0 },
    { db: flat, runtime: await runtimeOf(flat), ms: 0 },
  ];
  for (let n = 0; n < BATCHES + 2; n += 1) {
    for (const [i, target] of (n % 2 === 0 ? targets : [...targets].reverse()).entries()) {
      const batch = batchOf(`${n}-${i}`, n);
      const ms = await timed(async () => {
        const result = await ingestRecords(target.db, target.runtime, batch);
        if (result.accepted !== batch.length) throw new Error(`ingest accepted ${result.accepted} of ${batch.length}`);
      });
      if (n >= 2) target.ms += ms; // the first two rounds warm the caches and plans
    }
  }
  const rate = (ms: number) => round((BATCHES * 200) / (ms / 1000), 0);
  return { partitioned: rate(targets[0]!.ms), plain: rate(targets[1]!.ms) };
}

async function walBytes(db: Db, fn: () => Promise<unknown>): Promise<{ ms: number; wal_bytes: number }> {
  await db.driver.query(`CHECKPOINT`).catch(() => {});
  const [before] = await db.driver.query<{ lsn: string }>(`SELECT pg_current_wal_lsn()::text AS lsn`);
  const ms = await timed(fn);
  const [after] = await db.driver.query<{ bytes: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS bytes`,
    [before!.lsn],
  );
  return { ms: round(ms, 0), wal_bytes: Number(after!.bytes) };
}

/** Retires the oldest month through retention (archive, detach, drop), then DELETEs the next month's rows. */
async function retireVersusDelete(db: Db, now: Date) {
  const oldest = addMonths(shelfOf(now), -12);
  const next = addMonths(oldest, 1);
  const rowsOf = async (shelf: string) =>
    Number(
      (
        await db.driver.query<{ n: string }>(`SELECT count(*)::text AS n FROM attempts WHERE shelf = $1::date`, [shelf])
      )[0]!.n,
    );
  const retiredRows = await rowsOf(oldest);
  const deletedRows = await rowsOf(next);
  // A period that reaches just past the oldest month's end, so that month alone is due.
  const days = Math.floor((now.getTime() - shelfEnd(oldest).getTime()) / 86_400_000);
  await db.driver.query(
    `INSERT INTO retention_settings (scope, attempts_days, audit_days, updated_at, updated_by) VALUES ('*', $1::int, 3650, now(), 'bench')`,
    [days],
  );
  let archived = { rows: 0, bytes: 0 };
  let steps: Array<{ step: string; ms: number; kept?: number }> = [];
  const retire = await walBytes(db, async () => {
    const run = await applyRetention(db, now, archiveDir, { audit: false });
    const entry = run.retired.find((r) => r.source === partitionName("attempts", oldest));
    if (!entry) throw new Error(`retention did not retire ${oldest}: ${JSON.stringify(run)}`);
    archived = { rows: entry.rows, bytes: entry.bytes };
    steps = run.steps.filter((s) => s.name === entry.source).map(({ step, ms, kept }) => ({ step, ms, kept }));
  });
  const remove = await walBytes(db, () => db.driver.query(`DELETE FROM attempts WHERE shelf = $1::date`, [next]));
  return {
    month_retired: oldest,
    rows_in_month: retiredRows,
    rows_archived: archived.rows,
    archive_bytes: archived.bytes,
    retire,
    retire_steps: steps,
    month_deleted: next,
    rows_deleted: deletedRows,
    delete: remove,
    // Detaching and dropping against the DELETE; the archive is work a DELETE does not do (reported apart).
    detach_and_drop_ms: steps.filter((s) => s.step !== "archive").reduce((n, s) => n + s.ms, 0),
    archive_ms: steps.find((s) => s.step === "archive")?.ms ?? 0,
    wal_ratio: round(remove.wal_bytes / Math.max(retire.wal_bytes, 1), 1),
  };
}

async function main() {
  const now = new Date();
  const a = await createBenchDatabase();
  databases.push(a);
  await migrateDatabase(a.url);
  const parted = openDb(a.url);
  handles.push(parted);
  await makeYear(parted, now);

  console.log(`• filling ${FIRST.toLocaleString("en")} attempts over 12 months …`);
  const firstInvocations = await fill(parted, a.url, FIRST, 1, true);
  await parted.driver.query(`VACUUM ANALYZE`);
  const atFirst = { attempts: await count(parted), ...(await consoleP95(parted)) };
  console.log(`  queue p95 ${atFirst.queue_ms} ms, task p95 ${atFirst.task_ms} ms`);

  // The plain copy, from the same moment (CREATE DATABASE … TEMPLATE needs the source idle).
  await parted.driver.close();
  await parted.prisma.$disconnect();
  const b = await cloneDatabase(a);
  databases.push(b);
  const reopened = openDb(a.url);
  handles.push(reopened);
  const flat = openDb(b.url);
  handles.push(flat);
  await flatten(flat);
  const ingest = await ingestSideBySide(reopened, flat);
  console.log(`• ingest: partitioned ${ingest.partitioned} records/s, plain ${ingest.plain} records/s`);
  await flat.driver.close();
  await b.drop();
  databases.splice(databases.indexOf(b), 1);

  console.log(`• filling up to ${ATTEMPTS.toLocaleString("en")} attempts …`);
  await fill(reopened, a.url, ATTEMPTS - FIRST, firstInvocations + 10_000, false);
  await reopened.driver.query(`VACUUM ANALYZE`);
  const atFull = { attempts: await count(reopened), ...(await consoleP95(reopened)) };
  console.log(`  queue p95 ${atFull.queue_ms} ms, task p95 ${atFull.task_ms} ms`);

  const retirement = await retireVersusDelete(reopened, now);
  console.log(
    `• retire ${retirement.month_retired} (${retirement.rows_in_month.toLocaleString("en")} rows): ${retirement.retire.ms} ms, ${retirement.retire.wal_bytes.toLocaleString("en")} WAL bytes; ` +
      `DELETE ${retirement.month_deleted} (${retirement.rows_deleted.toLocaleString("en")} rows): ${retirement.delete.ms} ms, ${retirement.delete.wal_bytes.toLocaleString("en")} WAL bytes`,
  );

  const report = {
    commit: gitHead(),
    at: now.toISOString(),
    tiny,
    at_first: atFirst,
    at_full: atFull,
    ratios: {
      queue_p95: round(atFull.queue_ms / atFirst.queue_ms, 2),
      task_p95: round(atFull.task_ms / atFirst.task_ms, 2),
      ingest_partitioned_over_plain: round(ingest.partitioned / ingest.plain, 3),
    },
    ingest,
    retirement,
    targets: { p95_ratio_at_most: 1.5, ingest_ratio_at_least: 0.9 },
  };
  const file = path.join(
    resultsDir(),
    `retention-${now
      .toISOString()
      .replace(/[:.]/g, "-")
      .replace(/-\d{3}Z$/, "Z")}.json`,
  );
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`• ratios: ${JSON.stringify(report.ratios)} → ${file}`);
}

async function cloneDatabase(source: BenchDatabase): Promise<BenchDatabase> {
  const name = `${source.name}_plain`;
  const admin = new pg.Client({ connectionString: new URL("/postgres", source.url).toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${source.name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(`/${name}`, source.url).toString();
  return {
    name,
    url,
    drop: async () => {
      const c = new pg.Client({ connectionString: new URL("/postgres", source.url).toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const h of handles) {
      await h.driver.close().catch(() => {});
      await h.prisma.$disconnect().catch(() => {});
    }
    if (args.keep) console.log(`• kept: ${databases.map((d) => d.url).join(", ")}`);
    else for (const d of databases) await d.drop().catch((e) => console.error(`could not drop ${d.name}:`, e));
    rmSync(archiveDir, { recursive: true, force: true });
  });
