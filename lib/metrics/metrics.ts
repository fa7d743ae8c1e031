import "server-only";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { env } from "../env";
import type { MetricCasesPage, MetricCasesQuery, Metrics, MetricsRange, SeriesPoint, ToolRow } from "./schema";
import { resolveRange } from "./schema";
import { casesQuery } from "./cases-sql";
import { planRange, selectCoverage, rollupQuery, type Coverage, type RangePlan } from "./rollup";
import { getRetiredBefore } from "../retention/retired";
import { countQuery, durationsQuery, queueSeriesQuery, verificationTotalsQuery, type SourceName } from "./sql";

// Trust metrics (docs/outcome-model.md §6): what happened in [from, to), per tool, for
// managers. The SQL lives in metrics-sql.ts; this module runs it (the queries
// concurrently: PostgreSQL serves them on several pool connections) and
// folds the rows into totals, a per-tool breakdown and a series per bucket.
// Whole hours of the hourly sources come from metric_hours, episodes of
// invocations first seen before the last hour or so from metric_episodes
// (metrics-rollup.ts): same numbers, fewer rows read.

type CountRow = { tool: string; bucket: Date; kind: string | null; n: number; total: number | null };
type RollupRow = {
  tool: string;
  bucket: Date;
  invocations: number;
  attempts: number;
  receiver_replays: number;
  possible_duplicates: number;
};
type DurationRow = { tool: string; seconds: number };
type VerificationRow = {
  tool: string;
  requests: number;
  asks: number;
  answers: number;
  settled: number;
  gave_up: number;
};
type UnknownFate = "resolved_by_probe" | "resolved_by_verifier" | "resolved_by_operator" | "escalated" | "open";
type QueueRow = { bucket: Date; max: number; avg: number };

const COUNTED: SourceName[] = [
  "guard_denials",
  "probe_found",
  "receiver_replays",
  "possible_duplicate_effects",
  "unknown_outcomes",
  "escalations",
  "retries",
  "sla_breaches",
  "possible_duplicates_at_guard",
  "possible_duplicates_after",
];

/**
 * One metrics query in its own transaction with JIT off: these plans cost
 * enough for PostgreSQL to JIT-compile them, which takes longer (~150 ms) than
 * running them.
 */
function runQuery<T>(db: Db, text: string, params: unknown[]): Promise<T[]> {
  return db.driver.transaction((tx) => tx.query<T>(text, params), { settings: ["jit = off"] });
}

/** Linear interpolation between closest ranks, as PostgreSQL's percentile_cont. */
export function percentile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = q * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const value = sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
  return Math.round(value * 1000) / 1000;
}

function percentiles(values: number[]): { p50: number | null; p90: number | null } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9) };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

export function bucketOf(range: Pick<MetricsRange, "from" | "to">): "hour" | "day" {
  return range.to.getTime() - range.from.getTime() <= 2 * 86_400_000 ? "hour" : "day";
}

async function runtimeIdOf(db: Db, name: string | null): Promise<string | null> {
  if (name === null) return null;
  const runtime = await db.prisma.runtime.findUnique({ where: { name }, select: { id: true } });
  if (!runtime) throw new ApiError("NOT_FOUND", `No runtime named ${name}.`, { runtime: name });
  return runtime.id;
}

function rangeOf(query: Pick<MetricCasesQuery, "from" | "to" | "tool" | "runtime">, now: Date): MetricsRange {
  const range = resolveRange(query, now);
  if (typeof range === "string") throw new ApiError("INVALID_REQUEST", range);
  return range;
}

/** The parameters of every metrics query (metrics-sql.ts `declare`). */
function paramsOf(
  range: MetricsRange,
  runtimeId: string | null,
  now: Date,
  unit: "hour" | "day",
  cover: Coverage,
  plan: RangePlan,
): unknown[] {
  return [
    range.from.toISOString(),
    range.to.toISOString(),
    range.tool,
    runtimeId,
    now.toISOString(),
    env().SETTLE_STALL_WINDOW_S,
    unit,
    cover.rolledBefore?.toISOString() ?? "-infinity",
    ...plan.segments,
    cover.staleUids,
    plan.coveredFrom,
    plan.coveredTo,
    plan.staleHours,
  ];
}

function emptyTool(tool: string): ToolRow {
  return {
    tool,
    duplicates_prevented: 0,
    guard_denials: 0,
    probe_found: 0,
    receiver_replays: 0,
    possible_duplicate_effects: 0,
    unknown_outcomes: 0,
    resolved_by_probe: 0,
    resolved_by_verifier: 0,
    resolved_by_operator: 0,
    escalated: 0,
    open: 0,
    pending_recovery_p50: null,
    pending_recovery_p90: null,
    escalations: 0,
    invocations: 0,
    retries_per_invocation: null,
    approval_wait_p50: null,
    approval_wait_p90: null,
    sla_breaches: 0,
    possible_duplicates_at_guard: 0,
    possible_duplicates_after: 0,
    verification_requests: 0,
    verification_asks: 0,
    verification_answers: 0,
  };
}

/** Every bucket start from `from`'s bucket up to `to`, so the series has no gaps. */
function bucketStarts(range: MetricsRange, unit: "hour" | "day"): string[] {
  const step = unit === "hour" ? 3_600_000 : 86_400_000;
  const starts: string[] = [];
  for (let t = Math.floor(range.from.getTime() / step) * step; t < range.to.getTime(); t += step)
    starts.push(new Date(t).toISOString());
  return starts;
}

function emptyPoint(at: string): SeriesPoint {
  return {
    at,
    guard_denials: 0,
    probe_found: 0,
    receiver_replays: 0,
    unknown_outcomes: 0,
    escalations: 0,
    sla_breaches: 0,
    queue_size_max: null,
    queue_size_avg: null,
  };
}

/** Nothing rolled up: every source read raw (`rollups: false`, for checks and comparisons). */
const RAW: Coverage = { rolledBefore: null, staleUids: [], staleHours: [] };

export async function getMetrics(
  db: Db,
  query: Pick<MetricCasesQuery, "from" | "to" | "tool" | "runtime">,
  now = new Date(),
  { rollups = true }: { rollups?: boolean } = {},
): Promise<Metrics> {
  const range = rangeOf(query, now);
  const [runtimeId, cover] = await Promise.all([runtimeIdOf(db, range.runtime), rollups ? selectCoverage(db) : RAW]);
  const unit = bucketOf(range);
  const plan = planRange(range.from, range.to, cover);
  const params = paramsOf(range, runtimeId, now, unit, cover, plan);
  const sql = <T>(text: string) => runQuery<T>(db, text, params);

  const [counts, rollup, recoveries, waits, queue, asked] = await Promise.all([
    Promise.all(COUNTED.map((source) => sql<CountRow>(countQuery(source)).then((rows) => ({ source, rows })))),
    plan.coveredFrom < plan.coveredTo ? sql<RollupRow>(rollupQuery) : Promise.resolve([]),
    sql<DurationRow>(durationsQuery("pending_recovery")),
    sql<DurationRow>(durationsQuery("approval_wait")),
    sql<QueueRow>(queueSeriesQuery),
    sql<VerificationRow>(verificationTotalsQuery),
  ]);

  const tools = new Map<string, ToolRow>();
  const toolRow = (tool: string) => tools.get(tool) ?? tools.set(tool, emptyTool(tool)).get(tool)!;
  const series = new Map(bucketStarts(range, unit).map((at) => [at, emptyPoint(at)]));
  const point = (bucket: Date) =>
    series.get(bucket.toISOString()) ??
    series.set(bucket.toISOString(), emptyPoint(bucket.toISOString())).get(bucket.toISOString())!;
  const attempts = new Map<string, number>();

  for (const { source, rows } of counts) {
    for (const row of rows) {
      const t = toolRow(row.tool);
      const p = point(new Date(row.bucket));
      switch (source) {
        case "guard_denials":
        case "probe_found":
        case "receiver_replays":
        case "sla_breaches":
          t[source] += row.n;
          p[source] += row.n;
          break;
        case "possible_duplicate_effects":
          t.possible_duplicate_effects += row.n;
          break;
        case "possible_duplicates_at_guard":
        case "possible_duplicates_after":
          t[source] += row.n;
          break;
        case "unknown_outcomes":
          t.unknown_outcomes += row.n;
          t[row.kind as UnknownFate] += row.n;
          p.unknown_outcomes += row.n;
          break;
        case "escalations":
          t.escalations += row.n;
          p.escalations += row.n;
          break;
        case "retries":
          t.invocations += row.n;
          attempts.set(row.tool, (attempts.get(row.tool) ?? 0) + (row.total ?? 0));
          break;
      }
    }
  }
  for (const r of rollup) {
    const t = toolRow(r.tool);
    const p = point(new Date(r.bucket));
    t.invocations += r.invocations;
    attempts.set(r.tool, (attempts.get(r.tool) ?? 0) + r.attempts);
    t.receiver_replays += r.receiver_replays;
    p.receiver_replays += r.receiver_replays;
    t.possible_duplicate_effects += r.possible_duplicates;
  }
  let settledByVerifier = 0;
  let gaveUp = 0;
  for (const v of asked) {
    const t = toolRow(v.tool);
    t.verification_requests += v.requests;
    t.verification_asks += v.asks;
    t.verification_answers += v.answers;
    settledByVerifier += v.settled;
    gaveUp += v.gave_up;
  }
  for (const q of queue) {
    const p = point(new Date(q.bucket));
    p.queue_size_max = q.max;
    p.queue_size_avg = round3(q.avg);
  }

  const byToolDurations = (rows: DurationRow[]) => {
    const grouped = new Map<string, number[]>();
    for (const r of rows) (grouped.get(r.tool) ?? grouped.set(r.tool, []).get(r.tool)!).push(r.seconds);
    return grouped;
  };
  for (const [tool, values] of byToolDurations(recoveries)) {
    const { p50, p90 } = percentiles(values);
    Object.assign(toolRow(tool), { pending_recovery_p50: p50, pending_recovery_p90: p90 });
  }
  for (const [tool, values] of byToolDurations(waits)) {
    const { p50, p90 } = percentiles(values);
    Object.assign(toolRow(tool), { approval_wait_p50: p50, approval_wait_p90: p90 });
  }

  const rows = [...tools.values()].sort((a, b) => a.tool.localeCompare(b.tool));
  const sum = (key: keyof ToolRow) => rows.reduce((s, r) => s + (r[key] as number), 0);
  for (const r of rows) {
    r.duplicates_prevented = r.guard_denials + r.probe_found + r.receiver_replays;
    const total = attempts.get(r.tool);
    r.retries_per_invocation =
      r.invocations > 0 && total !== undefined ? round3((total - r.invocations) / r.invocations) : null;
  }
  const invocations = sum("invocations");
  const allAttempts = [...attempts.values()].reduce((s, n) => s + n, 0);

  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    duplicates_prevented: {
      total: sum("guard_denials") + sum("probe_found") + sum("receiver_replays"),
      guard_denials: sum("guard_denials"),
      probe_found: sum("probe_found"),
      receiver_replays: sum("receiver_replays"),
    },
    possible_duplicate_effects: sum("possible_duplicate_effects"),
    unknown_outcomes: {
      total: sum("unknown_outcomes"),
      resolved_by_probe: sum("resolved_by_probe"),
      resolved_by_verifier: sum("resolved_by_verifier"),
      resolved_by_operator: sum("resolved_by_operator"),
      escalated: sum("escalated"),
      open: sum("open"),
      settled_without_a_person:
        sum("unknown_outcomes") > 0
          ? round3((sum("resolved_by_probe") + sum("resolved_by_verifier")) / sum("unknown_outcomes"))
          : null,
    },
    possible_duplicates: {
      at_guard: sum("possible_duplicates_at_guard"),
      after_the_fact: sum("possible_duplicates_after"),
    },
    verifications: {
      requests: sum("verification_requests"),
      asks: sum("verification_asks"),
      answers: sum("verification_answers"),
      answer_rate: sum("verification_asks") > 0 ? round3(sum("verification_answers") / sum("verification_asks")) : null,
      settled: settledByVerifier,
      gave_up: gaveUp,
    },
    pending_recovery_seconds: percentiles(recoveries.map((r) => r.seconds)),
    escalations_by_tool: Object.fromEntries(rows.filter((r) => r.escalations > 0).map((r) => [r.tool, r.escalations])),
    retries_per_invocation: invocations > 0 ? round3((allAttempts - invocations) / invocations) : null,
    approval_wait_seconds: percentiles(waits.map((r) => r.seconds)),
    sla_breaches: sum("sla_breaches"),
    invocations,
    bucket: unit,
    by_tool: rows,
    series: [...series.values()].sort((a, b) => a.at.localeCompare(b.at)),
  };
}

type CaseRow = {
  invocation_id: string;
  task_id: string;
  runtime: string;
  tool: string;
  status: string;
  at: Date;
  detail: string | null;
};

/** The invocations behind one number of getMetrics, newest event first. */
export async function listMetricCases(db: Db, query: MetricCasesQuery, now = new Date()): Promise<MetricCasesPage> {
  const range = rangeOf(query, now);
  const [runtimeId, cover] = await Promise.all([runtimeIdOf(db, range.runtime), selectCoverage(db)]);
  const offset = Number(query.cursor ?? 0);
  // A list reads the hourly sources raw over the whole range; episodes as the numbers do.
  const whole: RangePlan = {
    segments: [[range.from.toISOString()], [range.to.toISOString()]],
    coveredFrom: range.from.toISOString(),
    coveredTo: range.from.toISOString(),
    staleHours: [],
  };
  const params = paramsOf(range, runtimeId, now, bucketOf(range), cover, whole);
  const [rows, retired] = await Promise.all([
    runQuery<CaseRow>(db, casesQuery(query.metric), [...params, query.limit + 1, offset]),
    getRetiredBefore(db.driver),
  ]);
  // The rollups keep a retired month's numbers; its rows, which the list reads, are in the archive.
  const before = Math.max(0, ...Object.values(retired).map((d) => d.getTime()));
  return {
    metric: query.metric,
    items: rows.slice(0, query.limit).map((r) => ({ ...r, at: new Date(r.at).toISOString() })),
    next_cursor: rows.length > query.limit ? String(offset + query.limit) : null,
    retired_before: range.from.getTime() < before ? new Date(before).toISOString() : null,
  };
}
