import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import path from "node:path";
import type { BaselineResult } from "./baseline";
import type { CpuUse } from "./cpu";
import type { LoadResult } from "./load";
import { resultsDir } from "./setup";

// The table printed at the end, and the JSON file the figures are kept in.

export const TARGETS = {
  batchedRecordsPerS: 10_000,
  batchedShareOfBaseline: 0.5,
  singleShareOfHealth: 0.7,
  p99AtRateMs: 50,
  visibilityMs: 2_000,
  dbCpuShareOfBefore: 1 / 3,
};

/**
 * Database CPU per record before the write path was rebuilt: main at 274d68a,
 * `npm run bench:ingest` on this machine (2026-12-01, 1.35 of 2 cores for
 * 4,791 batched records/s; 1.18 for 315 single records/s).
 */
export const BEFORE = { commit: "274d68a", batchedDbUsPerRecord: 282, singleDbUsPerRecord: 3_746 };

export type Report = {
  date: string;
  git: string | null;
  machine: { cpus: number; cpu_model: string; memory_gb: number; node: string; note: string };
  settings: Record<string, unknown>;
  /** GET /api/health under the single-record load's connections: the ceiling Next.js itself sets. */
  health: LoadResult;
  /** Cores busy before the run, while Settle was idle: what other processes took. */
  machine_busy_before: number | null;
  batched: LoadResult;
  single: LoadResult;
  rate: LoadResult;
  baseline: BaselineResult;
  baseline_single_connection: BaselineResult | null;
  ratio_batched_to_baseline: number;
  ratio_single_to_health: number;
  /** From accepting a record to seeing it in the queue API, with a person's token. */
  visibility_ms: number | null;
  /** Whether pg_stat_statements could be read (each phase's `statements`). */
  statements_available: boolean;
  before: typeof BEFORE;
  targets: typeof TARGETS;
  met: Record<string, boolean>;
};

export const SHARED_CORES_NOTE =
  "autocannon (this process), the Next.js server and PostgreSQL all run on this machine and share its cores; every figure includes that contention.";

export function machine() {
  const all = cpus();
  return {
    cpus: all.length,
    cpu_model: all[0]?.model ?? "unknown",
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    note: SHARED_CORES_NOTE,
  };
}

const within = (us: number | null, before: number) => us !== null && us <= before * TARGETS.dbCpuShareOfBefore;

export function evaluate(
  r: Pick<
    Report,
    "batched" | "single" | "rate" | "ratio_batched_to_baseline" | "ratio_single_to_health" | "visibility_ms"
  >,
) {
  return {
    batched_records_per_s: r.batched.records_per_s >= TARGETS.batchedRecordsPerS,
    batched_share_of_baseline: r.ratio_batched_to_baseline >= TARGETS.batchedShareOfBaseline,
    single_share_of_health: r.ratio_single_to_health >= TARGETS.singleShareOfHealth,
    p99_at_rate: r.rate.latency_ms.p99 < TARGETS.p99AtRateMs && r.rate.non_2xx === 0,
    db_cpu_batched: within(r.batched.db_cpu_us_per_record, BEFORE.batchedDbUsPerRecord),
    db_cpu_single: within(r.single.db_cpu_us_per_record, BEFORE.singleDbUsPerRecord),
    visibility: r.visibility_ms !== null && r.visibility_ms < TARGETS.visibilityMs,
  };
}

const cores = (l: { cpu_cores_used: CpuUse }) => {
  const c = l.cpu_cores_used;
  return c
    ? `client ${c.bench} · next ${c.server} · pg ${c.postgres} · others ${c.others} · machine ${c.machine}/${c.cores}`
    : "n/a";
};

export function printTable(r: Report): void {
  const mark = (ok: boolean | undefined) => (ok ? "met" : "MISSED");
  const us = (v: number | null) => (v === null ? "n/a" : `${v.toLocaleString("en")} µs`);
  const rows: Array<[string, string, string, string]> = [
    [
      "batched ingest (100 records/request)",
      `${r.batched.records_per_s.toLocaleString("en")} records/s`,
      `≥ 10,000 and ≥ 50% of baseline`,
      `${mark(r.met.batched_records_per_s)} / ${mark(r.met.batched_share_of_baseline)}`,
    ],
    ["  latency p50 / p99", `${r.batched.latency_ms.p50} / ${r.batched.latency_ms.p99} ms`, "", ""],
    [
      "  database CPU per record",
      us(r.batched.db_cpu_us_per_record),
      `≤ ⅓ of ${r.before.batchedDbUsPerRecord} µs (${r.before.commit})`,
      mark(r.met.db_cpu_batched),
    ],
    [
      "single-record ingest",
      `${r.single.req_per_s.toLocaleString("en")} req/s (${Math.round(r.ratio_single_to_health * 100)}% of health)`,
      "≥ 70% of GET /api/health",
      mark(r.met.single_share_of_health),
    ],
    ["  latency p50 / p99", `${r.single.latency_ms.p50} / ${r.single.latency_ms.p99} ms`, "", ""],
    [
      "  database CPU per record",
      us(r.single.db_cpu_us_per_record),
      `≤ ⅓ of ${r.before.singleDbUsPerRecord.toLocaleString("en")} µs (${r.before.commit})`,
      mark(r.met.db_cpu_single),
    ],
    [
      "  reference: GET /api/health (SELECT 1)",
      `${r.health.req_per_s.toLocaleString("en")} req/s`,
      "what Next.js itself allows",
      "",
    ],
    [
      `latency at ${r.settings.rate} req/s (single records)`,
      `p50 ${r.rate.latency_ms.p50} ms, p99 ${r.rate.latency_ms.p99} ms (${r.rate.req_per_s} req/s sent)`,
      "p99 < 50 ms",
      mark(r.met.p99_at_rate),
    ],
    ["  database CPU per record", us(r.rate.db_cpu_us_per_record), "", ""],
    [
      "ingest → queue visibility",
      r.visibility_ms === null ? "n/a" : `${r.visibility_ms} ms`,
      "< 2 s",
      mark(r.met.visibility),
    ],
    [
      `raw baseline (keys only, ${r.baseline.connections} conn.)`,
      `${r.baseline.rows_per_s.toLocaleString("en")} rows/s`,
      "",
      "",
    ],
  ];
  if (r.baseline_single_connection) {
    rows.push([
      "raw baseline, 1 connection",
      `${r.baseline_single_connection.rows_per_s.toLocaleString("en")} rows/s`,
      "",
      "",
    ]);
  }
  rows.push([
    "ratio batched / baseline",
    `${Math.round(r.ratio_batched_to_baseline * 100)}%`,
    "≥ 50%",
    mark(r.met.batched_share_of_baseline),
  ]);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((c, i) => c.padEnd(widths[i]!)).join("  │  ");
  console.log("");
  console.log(line(["measure", "figure", "target", ""]));
  console.log(widths.map((w) => "─".repeat(w)).join("──┼──"));
  for (const row of rows) console.log(line(row));
  console.log("");
  console.log("CPU cores used during each phase (from /proc):");
  console.log(`  health    ${cores(r.health)}`);
  console.log(`  batched   ${cores(r.batched)}`);
  console.log(`  single    ${cores(r.single)}`);
  console.log(`  rate      ${cores(r.rate)}`);
  console.log(`  baseline  ${cores(r.baseline)}`);
  const busy = [r.batched, r.single, r.rate, r.baseline].filter((l) => (l.cpu_cores_used?.others ?? 0) > 0.2);
  if (busy.length > 0) {
    console.log(
      `  ! other processes used more than 0.2 cores during ${busy.map((l) => ("label" in l ? l.label : "baseline")).join(", ")}: those figures are low`,
    );
  }
  const problems = [r.batched, r.single, r.rate].filter(
    (l) => l.non_2xx || l.errors || l.timeouts || l.duplicates || l.rejected,
  );
  for (const p of problems) {
    console.log(
      `  ! ${p.label}: ${p.non_2xx} non-2xx, ${p.errors} errors, ${p.timeouts} timeouts, ${p.duplicates} duplicates, ${p.rejected} rejected`,
    );
  }
  if (r.statements_available) {
    for (const phase of [r.batched, r.single]) {
      console.log(`\nWhere the database's time went, ${phase.label} (pg_stat_statements, by total time):`);
      for (const s of phase.statements)
        console.log(
          `  ${String(s.calls).padStart(7)} calls  ${s.mean_ms.toFixed(3).padStart(8)} ms each  ${String(s.wal_records).padStart(8)} WAL records  ${s.query}`,
        );
    }
  } else {
    console.log("\n(pg_stat_statements is not loaded on this server: no per-statement breakdown.)");
  }
  console.log("");
  console.log(`Note: ${SHARED_CORES_NOTE} (${r.machine.cpus} cores: ${r.machine.cpu_model})`);
}

export function writeReport(root: string, r: Report): string {
  const dir = resultsDir();
  const file = path.join(dir, `ingest-${r.date.replace(/[:]/g, "-").replace(/\.\d+Z$/, "Z")}.json`);
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}
