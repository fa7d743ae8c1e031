import autocannon, { type Client, type Result } from "autocannon";
import { measureCpu, type CpuUse } from "./cpu";
import type { StatementCost, StatementWatch } from "./pg-statements";
import { createRecordStream } from "./records";

// The three HTTP measurements, through autocannon's programmatic API. Each
// connection has its own record stream (a runtime of its own, in effect), so
// every request carries new event_ids and concurrent requests touch disjoint
// invocations, as separate runtimes' traffic does.
//
// Latencies are recorded here, from every 2xx response, rather than taken from
// autocannon's histogram: with a rate set, autocannon 9 "corrects" for
// coordinated omission with an expected interval of ceil(1 / rate) = 1 ms,
// which adds a made-up sample for every millisecond of every response.

export type LoadTarget = { url: string; key: string; serverPid: number; runId: string };

export type LoadResult = {
  label: string;
  connections: number;
  duration_s: number;
  requests: number;
  req_per_s: number;
  records_accepted: number;
  records_per_s: number;
  duplicates: number;
  rejected: number;
  latency_ms: { p50: number; p90: number; p99: number; max: number };
  non_2xx: number;
  errors: number;
  timeouts: number;
  cpu_cores_used: CpuUse;
  /** PostgreSQL's CPU per record stored (per request for the health reference), in µs. */
  db_cpu_us_per_record: number | null;
  /** The statements that took the database's time in this phase (pg_stat_statements, when loaded). */
  statements: StatementCost[];
};

type Phase = {
  label: string;
  /** Records per POST; 0 for the reference phase, which GETs /api/health instead. */
  recordsPerRequest: number;
  connections: number;
  duration: number;
  overallRate?: number;
  /**
   * autocannon's rate limit lets each connection send its whole second's
   * quota back to back when the second starts, all connections at once. Split
   * over `staggered` instances started evenly across the second, those bursts
   * spread out into something closer to a steady arrival rate.
   */
  staggered?: number;
};

let streams = 0;

export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
export const round = (v: number) => Math.round(v * 10) / 10;

async function run(target: LoadTarget, phase: Phase): Promise<LoadResult> {
  const totals = { accepted: 0, duplicates: 0, rejected: 0 };
  const latencies: number[] = [];
  const setupClient = (client: Client) => {
    const stream = createRecordStream(`${target.runId}-${phase.label}-${streams}`, ++streams);
    client.setRequests([
      {
        method: "POST",
        path: "/api/v1/envelopes",
        headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify(
            phase.recordsPerRequest === 1 ? stream.next() : { records: stream.batch(phase.recordsPerRequest) },
          ),
        }),
        onResponse: (status, body) => {
          if (status !== 207) return;
          // Only the summary at the end: parsing every 100-result body would load the client's CPU.
          const m = /"accepted":(\d+),"duplicates":(\d+),"rejected":(\d+)\}$/.exec(body.slice(-96));
          if (!m) return;
          totals.accepted += Number(m[1]);
          totals.duplicates += Number(m[2]);
          totals.rejected += Number(m[3]);
        },
      },
    ]);
  };

  const instances = phase.staggered ?? 1;
  const cpu = measureCpu(target.serverPid);
  const started = performance.now();
  const results: Result[] = await Promise.all(
    Array.from({ length: instances }, async (_, i) => {
      await new Promise((r) => setTimeout(r, (i * 1000) / instances));
      const instance = autocannon({
        url: target.url,
        connections: Math.max(1, Math.round(phase.connections / instances)),
        duration: phase.duration,
        timeout: 30,
        overallRate: phase.overallRate ? phase.overallRate / instances : undefined,
        requests: [{ method: "GET", path: "/api/health" }],
        setupClient: phase.recordsPerRequest > 0 ? setupClient : undefined,
      });
      instance.on("response", (_client, status, _bytes, ms) => {
        if (status >= 200 && status < 300) latencies.push(ms);
      });
      return instance;
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuUse = cpu();
  const requests = results.reduce((n, r) => n + r.requests.total, 0);
  // Each instance ran for the phase's duration; staggered ones started up to a second apart.
  const perSecond = results.reduce((n, r) => n + r.requests.total / r.duration, 0);
  latencies.sort((a, b) => a - b);
  return {
    label: phase.label,
    connections: phase.connections,
    duration_s: round(elapsed),
    requests,
    req_per_s: Math.round(perSecond),
    records_accepted: totals.accepted,
    records_per_s: Math.round((totals.accepted / requests) * perSecond),
    duplicates: totals.duplicates,
    rejected: totals.rejected,
    latency_ms: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? 0),
    },
    non_2xx: results.reduce((n, r) => n + r.non2xx, 0),
    errors: results.reduce((n, r) => n + r.errors, 0),
    timeouts: results.reduce((n, r) => n + r.timeouts, 0),
    cpu_cores_used: cpuUse,
    db_cpu_us_per_record: null,
    statements: [],
  };
}

function dbCpuPerRecord(r: LoadResult): number | null {
  const per = r.records_per_s > 0 ? r.records_per_s : r.req_per_s;
  return r.cpu_cores_used && per > 0 ? Math.round((r.cpu_cores_used.postgres / per) * 1e6) : null;
}

export type LoadPlan = {
  duration: number;
  warmup: number;
  batchConnections: number;
  singleConnections: number;
  rate: number;
  rateConnections: number;
  rateStaggered: number;
};

export async function runLoad(
  target: LoadTarget,
  plan: LoadPlan,
  log: (line: string) => void,
  statements?: StatementWatch,
) {
  const phases: Phase[] = [
    // What Next.js alone can serve here: a route that authenticates nobody and runs one SELECT 1.
    {
      label: "health",
      recordsPerRequest: 0,
      connections: plan.singleConnections,
      duration: Math.min(plan.duration, 10),
    },
    { label: "batched", recordsPerRequest: 100, connections: plan.batchConnections, duration: plan.duration },
    { label: "single", recordsPerRequest: 1, connections: plan.singleConnections, duration: plan.duration },
    {
      label: "rate",
      recordsPerRequest: 1,
      connections: plan.rateConnections,
      duration: plan.duration,
      overallRate: plan.rate,
      staggered: plan.rateStaggered,
    },
  ];
  const results: LoadResult[] = [];
  for (const phase of phases) {
    if (plan.warmup > 0) {
      log(`• ${phase.label}: warm-up ${plan.warmup} s`);
      await run(target, { ...phase, label: `${phase.label}-warmup`, duration: plan.warmup });
    }
    const rate = phase.overallRate
      ? `, ${phase.overallRate} req/s from ${phase.staggered} staggered autocannon instances`
      : "";
    log(`• ${phase.label}: ${phase.duration} s, ${phase.connections} connections${rate}`);
    await statements?.reset();
    const result = await run(target, phase);
    result.db_cpu_us_per_record = dbCpuPerRecord(result);
    result.statements = (await statements?.top()) ?? [];
    log(
      `  ${result.req_per_s} req/s, ${result.records_accepted > 0 ? `${result.records_per_s} records/s, ` : ""}p50 ${result.latency_ms.p50} ms, p99 ${result.latency_ms.p99} ms, db ${result.db_cpu_us_per_record ?? "n/a"} µs/record, cpu ${JSON.stringify(result.cpu_cores_used)}`,
    );
    results.push(result);
  }
  return { health: results[0]!, batched: results[1]!, single: results[2]!, rate: results[3]! };
}
