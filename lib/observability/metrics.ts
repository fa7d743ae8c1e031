import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Db } from "../db/client";
import { queueStatuses, stalledSql, storedStatusesOf } from "../outcome/status";
import { processWide } from "../process-wide";

// Settle's Prometheus metrics (GET /metrics, docs/operations.md). Counters and
// the latency histogram count what this process served since it started;
// the backlog gauges are read from the database when scraped, so every
// instance reports the same numbers and a restart loses none.

const UNKNOWN = ["outcome_unknown", "stalled"] as const;

function create() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "settle_process_" });
  const requests = new Histogram({
    name: "settle_http_request_duration_seconds",
    help: "API requests by method, route template and status, and how long each took.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const records = new Counter({
    name: "settle_ingest_records_total",
    help: "Records ingested (envelopes and OTLP tool spans), by what became of each: accepted, duplicate or rejected.",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  const gauge = <L extends string>(name: string, help: string, label: L) =>
    new Gauge({ name, help, labelNames: [label] as const, registers: [registry] });
  const queue = new Gauge({
    name: "settle_queue_invocations",
    help: "Invocations in the queue (they need a person or a check), by status and effect class.",
    labelNames: ["status", "effect_class"] as const,
    registers: [registry],
  });
  const unknowns = gauge(
    "settle_unknown_invocations",
    "Invocations whose outcome is unknown (outcome_unknown or stalled), by effect class.",
    "effect_class",
  );
  const verifications = gauge(
    "settle_verification_backlog",
    "Verification requests not yet answered: scheduled (waiting for their time) or open (asked), and how many are due now.",
    "state",
  );
  const deliveries = gauge(
    "settle_webhook_backlog",
    "Webhook and notification deliveries waiting to be sent (pending), by target: an endpoint or a notification channel.",
    "target",
  );
  const chainBroken = new Gauge({
    name: "settle_audit_chain_broken",
    help: "Hash chains of the audit trail the hourly check found broken (docs/audit.md): 0 when every chain is whole.",
    registers: [registry],
  });
  return { registry, requests, records, queue, unknowns, verifications, deliveries, chainBroken };
}

const metrics = processWide("prometheus", create);

type QueueCount = { status: string; effect_class: string; n: number };

async function queueCounts(db: Db): Promise<QueueCount[]> {
  // `stalled` is a pending row past its stall time: the one rule, in SQL (lib/outcome/status.ts).
  return db.driver.query<QueueCount>(
    `SELECT CASE WHEN ${stalledSql("", "now()")} THEN 'stalled' ELSE status END AS status,
            coalesce(effect_class, 'unclassified') AS effect_class, count(*)::int AS n
       FROM invocations
      WHERE status = ANY($1::text[]) AND (status <> 'pending' OR ${stalledSql("", "now()")})
      GROUP BY 1, 2`,
    [storedStatusesOf(queueStatuses)],
  );
}

export function observeRequest(method: string, route: string, status: number, seconds: number): void {
  metrics.requests.observe({ method, route, status: String(status) }, seconds);
}

export function countIngested(counts: { accepted: number; duplicates: number; rejected: number }): void {
  if (counts.accepted) metrics.records.inc({ result: "accepted" }, counts.accepted);
  if (counts.duplicates) metrics.records.inc({ result: "duplicate" }, counts.duplicates);
  if (counts.rejected) metrics.records.inc({ result: "rejected" }, counts.rejected);
}

/** The backlog gauges, read from the database once per scrape (each query once, every gauge from its rows). */
async function readBacklogs(db: Db): Promise<void> {
  const [counts, requests, pending, chains] = await Promise.all([
    queueCounts(db),
    db.driver.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM verification_requests WHERE state IN ('scheduled', 'open') GROUP BY state
       UNION ALL
       SELECT 'due', count(*)::int FROM verification_requests WHERE state IN ('scheduled', 'open') AND due_at <= now()`,
    ),
    db.driver.query<{ target: string; n: number }>(
      `SELECT CASE WHEN channel_id IS NULL THEN 'endpoint' ELSE 'channel' END AS target, count(*)::int AS n
         FROM webhook_deliveries WHERE status = 'pending' GROUP BY 1`,
    ),
    db.driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_chain_heads WHERE broken IS NOT NULL`),
  ]);
  metrics.chainBroken.set(chains[0]?.n ?? 0);
  const { queue, unknowns, verifications, deliveries } = metrics;
  for (const gauge of [queue, unknowns, verifications, deliveries]) gauge.reset();
  const byClass = new Map<string, number>();
  for (const { status, effect_class, n } of counts) {
    queue.set({ status, effect_class }, n);
    if ((UNKNOWN as readonly string[]).includes(status))
      byClass.set(effect_class, (byClass.get(effect_class) ?? 0) + n);
  }
  for (const [effect_class, n] of byClass) unknowns.set({ effect_class }, n);
  for (const { state, n } of requests) verifications.set({ state }, n);
  for (const target of ["endpoint", "channel"])
    deliveries.set({ target }, pending.find((r) => r.target === target)?.n ?? 0);
}

/** The Prometheus text exposition, with the backlogs read from `db` now. */
export async function renderMetrics(db: Db): Promise<{ body: string; contentType: string }> {
  await readBacklogs(db);
  return { body: await metrics.registry.metrics(), contentType: metrics.registry.contentType };
}
