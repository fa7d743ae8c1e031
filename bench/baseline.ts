import { randomUUID } from "node:crypto";
import pg from "pg";
import { deriveInvocation } from "@/lib/outcome/fold";
import { foldRecordOf } from "@/lib/write/store-records";
import { prepareRecord } from "@/lib/ingest/record";
import type { PreparedRecord } from "@/lib/write/prepared-record";
import { measureCpu, type CpuUse } from "./cpu";
import { createRecordStream } from "./records";

// The raw ceiling: storing the same data with nothing of Settle's. The task,
// invocation and attempt rows ingest would write (envelope as jsonb, the
// invocation's derived state folded beforehand) go with plain multi-row
// INSERT … ON CONFLICT, one transaction per batch of 100 as ingest commits per
// request, into tables that have only their primary and unique keys — no
// secondary indexes, no status log, no search rows, no HTTP. Normalization and
// the fold run before the clock starts: only the database's work is timed.

/** The baseline's own tables, beside Settle's in the bench database: the same columns, only the keys. */
export const RAW_TABLES = `
  CREATE TABLE raw_tasks (runtime_id uuid NOT NULL, task_id text NOT NULL, first_seen_at timestamptz(3) NOT NULL, last_seen_at timestamptz(3) NOT NULL,
                          PRIMARY KEY (runtime_id, task_id));
  CREATE TABLE raw_invocations (id uuid PRIMARY KEY, runtime_id uuid NOT NULL, invocation_id text NOT NULL, task_id text NOT NULL, tool text NOT NULL,
                                effect_class text, idempotency_key text, status text NOT NULL, commit_state text NOT NULL, next_action text NOT NULL,
                                version int NOT NULL, conflict boolean NOT NULL, attempt_count int NOT NULL, first_seen_at timestamptz(3) NOT NULL,
                                last_attempt_at timestamptz(3) NOT NULL, status_since timestamptz(3) NOT NULL, stall_at timestamptz(3),
                                not_before timestamptz(3), assignee text, user_message text, last_code text, resolution jsonb,
                                updated_at timestamptz(3) NOT NULL DEFAULT now(), UNIQUE (runtime_id, invocation_id));
  CREATE TABLE raw_attempts (runtime_id uuid NOT NULL, event_key text NOT NULL, invocation_uid uuid NOT NULL, event_id text, seq int NOT NULL,
                             attempt_id text, attempt_no int, phase text NOT NULL, at timestamptz(3) NOT NULL, received_at timestamptz(3) NOT NULL DEFAULT now(),
                             tool text NOT NULL, effect_class text, idempotency_key text, budget_left_s int, args_digest text, dialect text NOT NULL,
                             wrapper_dialect text, outcome text NOT NULL, commit_state text NOT NULL, code text, category text, retry_directive text NOT NULL,
                             not_before timestamptz(3), max_attempts_remaining int, next_action text NOT NULL, dispatch_stage text, probe_result text,
                             safe_details jsonb NOT NULL DEFAULT '{}', agent_message text, user_message text, items jsonb NOT NULL DEFAULT '[]', envelope jsonb,
                             PRIMARY KEY (runtime_id, event_key));`;

export type BaselineResult = {
  connections: number;
  batches: number;
  rows: { attempts: number; invocations: number; tasks: number };
  duration_s: number;
  rows_per_s: number;
  cpu_cores_used: CpuUse;
};

type Statement = { text: string; values: unknown[] };

function valuesList(rows: unknown[][]): { placeholders: string; values: unknown[] } {
  const values: unknown[] = [];
  const placeholders = rows
    .map((row) => `(${row.map((v) => (values.push(v), `$${values.length}`)).join(", ")})`)
    .join(", ");
  return { placeholders, values };
}

const INVOCATION_COLUMNS = `id, runtime_id, invocation_id, task_id, tool, effect_class, idempotency_key, status, commit_state,
  next_action, version, conflict, attempt_count, first_seen_at, last_attempt_at, status_since, stall_at, not_before,
  assignee, user_message, last_code, resolution`;
const ATTEMPT_COLUMNS = `runtime_id, invocation_uid, event_key, event_id, seq, attempt_id, attempt_no, phase, at, tool,
  effect_class, idempotency_key, budget_left_s, args_digest, dialect, wrapper_dialect, outcome, commit_state, code,
  category, retry_directive, not_before, max_attempts_remaining, next_action, dispatch_stage, probe_result,
  safe_details, agent_message, user_message, items, envelope`;

/** One batch's three statements, built ahead of the timed part. */
function batchStatements(runtimeId: string, prepared: PreparedRecord[], uids: Map<string, string>): Statement[] {
  const byInvocation = new Map<string, PreparedRecord[]>();
  for (const p of prepared) byInvocation.set(p.invocationId, [...(byInvocation.get(p.invocationId) ?? []), p]);
  const invocationRows = [...byInvocation.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([invocationId, records]) => {
      let uid = uids.get(invocationId);
      if (!uid) uids.set(invocationId, (uid = randomUUID()));
      const d = deriveInvocation(
        records.map((p) => foldRecordOf(p, 1)),
        [],
        { stallWindowS: 300 },
      );
      const first = records[0]!;
      return [
        uid,
        runtimeId,
        invocationId,
        first.taskId,
        d.tool,
        d.effectClass,
        d.idempotencyKey,
        d.status,
        d.commitState,
        d.nextAction,
        1,
        d.conflict,
        d.attemptCount,
        d.firstSeenAt,
        d.lastAttemptAt,
        d.statusSince,
        d.stallAt,
        d.notBefore,
        d.assignee,
        d.userMessage,
        d.lastCode,
        d.resolution === null ? null : JSON.stringify(d.resolution),
      ];
    });
  const attemptRows = prepared.map((p) => {
    const n = p.normalized;
    return [
      runtimeId,
      uids.get(p.invocationId),
      p.eventKey,
      p.eventId,
      1,
      p.attemptId,
      p.attemptNo,
      p.phase,
      p.at,
      p.tool,
      p.effectClass,
      p.idempotencyKey,
      p.budgetLeftS === null ? null : Math.round(p.budgetLeftS),
      p.argsDigest,
      n.dialect,
      n.wrapper_dialect,
      n.outcome,
      n.commit_state,
      n.code,
      n.category,
      n.retry.directive,
      n.retry.not_before,
      n.retry.max_attempts_remaining,
      n.next_action,
      n.dispatch_stage,
      p.probeResult,
      JSON.stringify(n.safe_details),
      n.agent_message,
      n.user_message,
      JSON.stringify(n.items),
      JSON.stringify(p.envelope),
    ];
  });
  const tasks = new Map<string, { first: string; last: string }>();
  for (const p of prepared) {
    const t = tasks.get(p.taskId) ?? { first: p.at, last: p.at };
    if (p.at < t.first) t.first = p.at;
    if (p.at > t.last) t.last = p.at;
    tasks.set(p.taskId, t);
  }
  const taskRows = [...tasks.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([taskId, t]) => [runtimeId, taskId, t.first, t.last]);

  const inv = valuesList(invocationRows);
  const att = valuesList(attemptRows);
  const tsk = valuesList(taskRows);
  return [
    {
      // Invocations span batches, as in real traffic: a later batch updates the row.
      text: `INSERT INTO raw_invocations (${INVOCATION_COLUMNS}) VALUES ${inv.placeholders}
             ON CONFLICT (runtime_id, invocation_id) DO UPDATE SET status = excluded.status, commit_state = excluded.commit_state,
               next_action = excluded.next_action, version = raw_invocations.version + 1, attempt_count = excluded.attempt_count,
               last_attempt_at = excluded.last_attempt_at, status_since = excluded.status_since, stall_at = excluded.stall_at,
               not_before = excluded.not_before, user_message = excluded.user_message, last_code = excluded.last_code,
               resolution = excluded.resolution, updated_at = now()`,
      values: inv.values,
    },
    {
      text: `INSERT INTO raw_attempts (${ATTEMPT_COLUMNS}) VALUES ${att.placeholders} ON CONFLICT (runtime_id, event_key) DO NOTHING`,
      values: att.values,
    },
    {
      text: `INSERT INTO raw_tasks (runtime_id, task_id, first_seen_at, last_seen_at) VALUES ${tsk.placeholders}
             ON CONFLICT (runtime_id, task_id) DO UPDATE SET first_seen_at = LEAST(raw_tasks.first_seen_at, excluded.first_seen_at),
               last_seen_at = GREATEST(raw_tasks.last_seen_at, excluded.last_seen_at)`,
      values: tsk.values,
    },
  ];
}

export async function runBaseline(
  databaseUrl: string,
  options: {
    runtimeId: string;
    runId: string;
    records: number;
    connections: number;
    batchSize?: number;
    cpuGroup: number;
  },
): Promise<BaselineResult> {
  const batchSize = options.batchSize ?? 100;
  const receivedAt = new Date();
  const perConnection = Math.ceil(options.records / options.connections / batchSize);
  const rows = { attempts: 0, invocations: 0, tasks: 0 };
  const plans = Array.from({ length: options.connections }, (_, c) => {
    const stream = createRecordStream(`${options.runId}-baseline-c${options.connections}-${c}`, 1000 + c);
    const uids = new Map<string, string>();
    return Array.from({ length: perConnection }, () => {
      const prepared = stream
        .batch(batchSize)
        .map((r) => prepareRecord(r, receivedAt))
        .filter((p): p is PreparedRecord => !("code" in p));
      const statements = batchStatements(options.runtimeId, prepared, uids);
      rows.attempts += prepared.length;
      rows.invocations += (statements[0]!.values.length / 22) | 0;
      rows.tasks += statements[2]!.values.length / 4;
      return statements;
    });
  });

  const setup = new pg.Client({ connectionString: databaseUrl });
  await setup.connect();
  await setup
    .query(RAW_TABLES.replaceAll("CREATE TABLE raw_", "CREATE TABLE IF NOT EXISTS raw_"))
    .finally(() => setup.end());

  const clients = await Promise.all(
    plans.map(async () => {
      const client = new pg.Client({ connectionString: databaseUrl, application_name: "settle-bench-baseline" });
      await client.connect();
      return client;
    }),
  );
  try {
    const cpu = measureCpu(options.cpuGroup);
    const started = performance.now();
    await Promise.all(
      plans.map(async (batches, c) => {
        const client = clients[c]!;
        for (const statements of batches) {
          await client.query("BEGIN");
          for (const s of statements) await client.query(s.text, s.values);
          await client.query("COMMIT");
        }
      }),
    );
    const duration = (performance.now() - started) / 1000;
    return {
      connections: options.connections,
      batches: perConnection * options.connections,
      rows,
      duration_s: Math.round(duration * 100) / 100,
      rows_per_s: Math.round(rows.attempts / duration),
      cpu_cores_used: cpu(),
    };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}
