import { writeFileSync } from "node:fs";
import path from "node:path";
import { machine, SHARED_CORES_NOTE } from "../report";
import type { IndexComparison, Plan } from "./explain";
import type { FirstLoad } from "./first-load";
import type { GetResult, Target } from "./http";
import { resultsDir } from "../setup";

// The console benchmark's table and the JSON file its figures are kept in.

export const CONSOLE_TARGETS = { queueP95Ms: 100, taskP95Ms: 150, firstLoadGzipKb: 200 };

export type ConsoleReport = {
  date: string;
  git: string | null;
  machine: ReturnType<typeof machine>;
  machine_busy_before: number | null;
  settings: Record<string, unknown>;
  data: {
    invocations: number;
    attempts: number;
    actions: number;
    tasks: number;
    in_queue: number;
    big_task_attempts: number;
    generate_s: number;
    fold_checked: number;
  };
  first_load_js: FirstLoad;
  explain: { indexes: IndexComparison[]; queries: Array<{ query: string; statement: "page" | "count"; plan: Plan }> };
  results: GetResult[];
  /** The concurrency the targets are judged at. */
  judged_at_connections: number;
  met: Record<string, boolean>;
};

export function targetOf(t: Pick<Target, "path">): number {
  return t.path.startsWith("/tasks/") || t.path.startsWith("/api/v1/tasks/")
    ? CONSOLE_TARGETS.taskP95Ms
    : CONSOLE_TARGETS.queueP95Ms;
}

export function evaluate(
  r: Pick<ConsoleReport, "results" | "first_load_js" | "judged_at_connections">,
): Record<string, boolean> {
  const met: Record<string, boolean> = {};
  for (const result of r.results.filter((x) => x.connections === r.judged_at_connections)) {
    met[result.label] = result.latency_ms.p95 < targetOf(result) && result.non_2xx === 0 && result.errors === 0;
  }
  met.first_load_js = r.first_load_js.gzip_bytes < CONSOLE_TARGETS.firstLoadGzipKb * 1000;
  return met;
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

export function printTable(r: ConsoleReport): void {
  const mark = (ok: boolean | undefined) => (ok === undefined ? "" : ok ? "met" : "MISSED");
  const header = ["measure", "conn.", "p50 ms", "p95 ms", "p99 ms", "req/s", "target", ""];
  const rows: string[][] = r.results.map((x) => [
    `${x.label}  ${x.path}`,
    String(x.connections),
    String(x.latency_ms.p50),
    String(x.latency_ms.p95),
    String(x.latency_ms.p99),
    String(x.req_per_s),
    `p95 < ${targetOf(x)} ms`,
    x.connections === r.judged_at_connections ? mark(r.met[x.label]) : "",
  ]);
  rows.push([
    "first-load JS of /, gzip",
    "",
    "",
    "",
    "",
    "",
    `< ${CONSOLE_TARGETS.firstLoadGzipKb} kB`,
    `${kb(r.first_load_js.gzip_bytes)} ${mark(r.met.first_load_js)}`,
  ]);
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row.map((c, i) => (i >= 1 && i <= 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(" │ ");
  console.log("");
  console.log(line(header));
  console.log(widths.map((w) => "─".repeat(w)).join("─┼─"));
  for (const row of rows) console.log(line(row));
  console.log("");
  const d = r.data;
  console.log(
    `Data: ${d.invocations.toLocaleString("en")} invocations, ${d.attempts.toLocaleString("en")} attempts, ${d.actions.toLocaleString("en")} audit entries, ` +
      `${d.tasks.toLocaleString("en")} tasks, ${d.in_queue.toLocaleString("en")} in the queue; generated in ${d.generate_s} s; ${d.fold_checked} sampled invocations fold to their stored state.`,
  );
  for (const x of r.explain.indexes) {
    console.log(
      `EXPLAIN ANALYZE, queue ${x.query}: page ${x.without.page.execution_ms} → ${x.with.page.execution_ms} ms, ` +
        `count ${x.without.count.execution_ms} → ${x.with.count.execution_ms} ms (without → with ${x.index})`,
    );
  }
  for (const e of r.explain.queries)
    console.log(`EXPLAIN ANALYZE, ${e.statement} of ${e.query}: ${e.plan.execution_ms} ms`);
  const busy = r.results.filter((x) => (x.cpu_cores_used?.others ?? 0) > 0.2);
  if (busy.length > 0)
    console.log(
      `! other processes used more than 0.2 cores during: ${busy.map((x) => `${x.label} (${x.connections})`).join(", ")}: those figures are high`,
    );
  for (const x of r.results.filter((x) => x.non_2xx || x.errors || x.timeouts)) {
    console.log(`! ${x.label}: ${x.non_2xx} non-2xx, ${x.errors} errors, ${x.timeouts} timeouts`);
  }
  console.log(`Note: ${SHARED_CORES_NOTE} (${r.machine.cpus} cores: ${r.machine.cpu_model})`);
}

export function writeReport(root: string, r: ConsoleReport): string {
  const dir = resultsDir();
  const file = path.join(dir, `console-${r.date.replace(/[:]/g, "-").replace(/\.\d+Z$/, "Z")}.json`);
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}
