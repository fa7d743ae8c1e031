import pg from "pg";

// Fills a bench database with a console workload, fast: PostgreSQL generates
// the rows itself (INSERT … SELECT over generate_series), so a million
// attempts take seconds, not a million round trips.
//
// Every row is what ingest and operator actions would have written: each
// invocation has one to three transport attempts (intent + outcome; earlier
// ones rate-limited), the last one ending as its status group says, plus a
// probe or operator actions where the status needs them, and its derived
// columns are the fold of exactly those records (checked by check.ts).
//
// Shape: 5 runtimes, 62,500 tasks, 250,000 invocations with 1,000,404 records,
// ~4% of invocations in the queue, and one more task (`bench-task-1000`) whose
// 100 invocations have 5 attempts each: 1,000 records on one timeline.

export type Workload = {
  invocations: number;
  bigTaskInvocations: number;
  bigTaskAttemptsEach: number;
  /** The number of the first invocation (a second call adds more after the first's). */
  first?: number;
  /** Invocations are first seen over this many days before now. */
  spreadDays?: number;
};
export const DEFAULT_WORKLOAD: Workload = { invocations: 250_000, bigTaskInvocations: 100, bigTaskAttemptsEach: 5 };
export const BIG_TASK = "bench-task-1000";
export const RUNTIMES = ["billing-agent", "crm-sync", "mailer", "ops-agent", "support-agent"];

const tools = [
  ["create_invoice", "create"],
  ["charge_card", "money"],
  ["refund_payment", "money"],
  ["send_email", "send"],
  ["send_sms", "send"],
  ["delete_record", "destructive"],
  ["cancel_subscription", "destructive"],
  ["get_price", "read"],
  ["lookup_customer", "read"],
  ["create_ticket", "create"],
  ["update_crm_contact", null], // no effect class given: treated as a write
] as const;

/**
 * A status group: its share (per mille, cumulative bound), the last outcome
 * (outcome, commit state, next action, code, user message; none for an intent
 * still waiting), and what follows it: a probe, or one operator action.
 */
type Group = {
  name: string;
  upTo: number;
  status: string;
  commit: string;
  next: string;
  last: [outcome: string, commit: string, next: string, code: string | null] | null;
  message: string | null;
  then: "probe" | "request_verification" | "escalate" | "mark_reconciled" | null;
  /** An intent inside its stall window (stall_at in the future) rather than a stalled one. */
  live?: boolean;
};

const UNKNOWN: Group["last"] = ["unknown", "unknown", "verify_operation", "UPSTREAM_TIMEOUT"];
const CHECKING = "The request may have gone through; it is being checked before anything is sent again.";

// Most settled; about 4% need a person (the first six groups).
export const GROUPS: Group[] = [
  {
    name: "outcome_unknown",
    upTo: 20,
    status: "outcome_unknown",
    commit: "unknown",
    next: "verify_operation",
    last: UNKNOWN,
    message: CHECKING,
    then: null,
  },
  {
    name: "stalled",
    upTo: 26,
    status: "pending",
    commit: "unknown",
    next: "none",
    last: null,
    message: null,
    then: null,
  },
  {
    name: "partially_applied",
    upTo: 30,
    status: "partially_applied",
    commit: "partial",
    next: "verify_operation",
    last: ["unknown", "partial", "verify_operation", "PARTIAL_BATCH"],
    message: "Some items were applied.",
    then: null,
  },
  {
    name: "awaiting_approval",
    upTo: 34,
    status: "awaiting_approval",
    commit: "not_committed",
    next: "request_approval",
    last: ["permanent", "not_committed", "request_approval", "APPROVAL_REQUIRED"],
    message: "Waiting for a person to approve.",
    then: null,
  },
  {
    name: "verifying",
    upTo: 37,
    status: "verifying",
    commit: "unknown",
    next: "verify_operation",
    last: UNKNOWN,
    message: CHECKING,
    then: "request_verification",
  },
  {
    name: "escalated",
    upTo: 40,
    status: "escalated",
    commit: "unknown",
    next: "escalate",
    last: UNKNOWN,
    message: CHECKING,
    then: "escalate",
  },
  {
    name: "pending",
    upTo: 50,
    status: "pending",
    commit: "unknown",
    next: "none",
    last: null,
    message: null,
    then: null,
    live: true,
  },
  {
    name: "needs_input",
    upTo: 60,
    status: "needs_input",
    commit: "not_committed",
    next: "correct_input",
    last: ["permanent", "not_committed", "correct_input", "VALIDATION_FAILED"],
    message: "The email address is not valid.",
    then: null,
  },
  {
    name: "retry_scheduled",
    upTo: 80,
    status: "retry_scheduled",
    commit: "not_committed",
    next: "wait_and_retry",
    last: ["retryable", "not_committed", "wait_and_retry", "RATE_LIMITED"],
    message: null,
    then: null,
  },
  {
    name: "failed",
    upTo: 110,
    status: "failed",
    commit: "not_committed",
    next: "choose_alternative",
    last: ["permanent", "not_committed", "choose_alternative", "UPSTREAM_REJECTED"],
    message: "The provider refused the request.",
    then: null,
  },
  {
    name: "reconciled_probe",
    upTo: 118,
    status: "reconciled",
    commit: "committed",
    next: "none",
    last: UNKNOWN,
    message: CHECKING,
    then: "probe",
  },
  {
    name: "reconciled_operator",
    upTo: 125,
    status: "reconciled",
    commit: "committed",
    next: "none",
    last: UNKNOWN,
    message: CHECKING,
    then: "mark_reconciled",
  },
  {
    name: "succeeded",
    upTo: 1000,
    status: "succeeded",
    commit: "committed",
    next: "none",
    last: ["ok", "committed", "none", null],
    message: null,
    then: null,
  },
];

// Seconds: an attempt every minute, its outcome 8 s after its intent, what follows 2 min after the last outcome.
const INTENT_BUDGET_S = 120;
const LIVE_BUDGET_S = 3600;
const NOTE = {
  escalate: "No access to the provider's ledger; finance to check.",
  mark_reconciled: "Found in the provider's ledger.",
};

const lit = (v: string | number | boolean | null) =>
  v === null ? "NULL" : typeof v === "string" ? `'${v.replace(/'/g, "''")}'` : String(v);
const iso = (col: string) => `to_char((${col}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

function groupsValues(): string {
  const rows = GROUPS.map((g) =>
    [
      g.name,
      g.upTo,
      g.status,
      g.commit,
      g.next,
      g.last?.[0] ?? null,
      g.last?.[1] ?? null,
      g.last?.[2] ?? null,
      g.last?.[3] ?? null,
      g.message,
      g.then,
      g.live ?? false,
    ]
      .map(lit)
      .join(", "),
  );
  return `(VALUES ${rows.map((r) => `(${r})`).join(", ")}) AS g(name, up_to, status, commit_state, next_action, l_outcome, l_commit, l_next, l_code, l_message, then_, live)`;
}

// The plan: one row per invocation with everything its records and derived columns follow from.
// `t` (first intent) is rounded to the millisecond, as timestamptz(3) columns store it.
const PLAN = `CREATE UNLOGGED TABLE bench_plan (
  i int, uid uuid, runtime_id uuid, invocation_id text, task_id text, tool text, effect_class text, idem text,
  grp text, n int, t timestamptz, assignee text, records int, actions int)`;

/** `from` yields i, s (0–999: picks the group), n (attempts), invocation_id, task_id, runtime_id, t. */
function fillPlan(from: string): string {
  const toolArray = `ARRAY[${tools.map(([t]) => lit(t)).join(",")}]`;
  const classArray = `ARRAY[${tools.map(([, c]) => lit(c)).join(",")}]::text[]`;
  const groupOf = `CASE ${GROUPS.map((g) => `WHEN x.s < ${g.upTo} THEN ${lit(g.name)}`).join(" ")} END`;
  return `INSERT INTO bench_plan
    SELECT x.i, gen_random_uuid(), x.runtime_id, x.invocation_id, x.task_id, (${toolArray})[1 + x.i % 11], (${classArray})[1 + x.i % 11],
           'key-' || md5(x.i::text), g.name, x.n,
           date_trunc('milliseconds', CASE WHEN g.live THEN now() - (x.n - 1) * interval '1 minute' - interval '30 seconds' ELSE x.t END),
           CASE WHEN g.up_to <= 40 AND x.i % 7 = 0 THEN 'ops' || (x.i % 4) || '@example.com' END,
           2 * x.n - CASE WHEN g.l_outcome IS NULL THEN 1 ELSE 0 END + CASE WHEN g.then_ = 'probe' THEN 1 ELSE 0 END,
           CASE WHEN g.then_ IN ('request_verification', 'escalate', 'mark_reconciled') THEN 1 ELSE 0 END
             + CASE WHEN g.up_to <= 40 AND x.i % 7 = 0 THEN 1 ELSE 0 END
      FROM (${from}) AS x JOIN ${groupsValues()} ON g.name = ${groupOf}`;
}

/** Records for every plan row: intents and outcomes of attempts 1..n, then a probe where the group has one. */
function attemptsFromPlan(): string {
  const dialects = "ARRAY['settle','seed002','mcp','rfc9457','anthropic','openai']";
  return `INSERT INTO attempts (invocation_uid, runtime_id, event_key, event_id, seq, attempt_id, attempt_no, phase, at, received_at, shelf, tool,
                        effect_class, idempotency_key, budget_left_s, dialect, outcome, commit_state, code, category, retry_directive,
                        not_before, max_attempts_remaining, next_action, dispatch_stage, probe_result, safe_details, agent_message,
                        user_message, items, envelope, summary)
    SELECT r.uid, r.runtime_id, r.key, r.key, r.seq, r.invocation_id || '-a' || r.a, r.a, r.phase, r.at, r.at + interval '1 second',
           (date_trunc('month', (r.at + interval '1 second') AT TIME ZONE 'UTC'))::date,
           r.tool, r.effect_class, r.idem, CASE WHEN r.phase = 'intent' THEN r.budget END,
           CASE WHEN r.phase = 'outcome' THEN (${dialects})[1 + (r.i + r.a) % 6] ELSE 'settle' END,
           r.outcome, r.commit, r.code, CASE WHEN r.code = 'RATE_LIMITED' THEN 'rate_limit' END,
           CASE r.outcome WHEN 'retryable' THEN 'after_delay' WHEN 'ok' THEN 'allowed' ELSE 'never' END,
           r.not_before, CASE WHEN r.outcome = 'retryable' THEN 3 END, r.next,
           CASE r.phase WHEN 'intent' THEN 'pre_dispatch' WHEN 'outcome' THEN CASE WHEN r.outcome = 'unknown' THEN 'dispatch_unconfirmed' ELSE 'dispatched' END END,
           CASE WHEN r.phase = 'probe' THEN 'found' END,
           jsonb_build_object('attempt_id', r.invocation_id || '-a' || r.a),
           CASE WHEN r.phase = 'outcome' AND r.outcome <> 'ok' THEN 'Upstream answered ' || coalesce(r.code, 'nothing') || ' after 8.1 s.' END,
           r.message, '[]'::jsonb,
           CASE WHEN r.phase <> 'intent' THEN jsonb_build_object('ok', r.outcome = 'ok', 'code', r.code, 'commit_state', r.commit,
                  'next_action', r.next, 'operation_ref', r.idem, 'retry', jsonb_build_object('directive', CASE WHEN r.outcome = 'retryable' THEN 'after_delay' ELSE 'never' END)) END,
           ${SUMMARY("r.i")}
      FROM (
        SELECT p.i, p.uid, p.runtime_id, p.invocation_id, p.tool, p.effect_class, p.idem, s.a, s.phase, s.at,
               p.invocation_id || ':a' || s.a || ':' || s.phase AS key,
               row_number() OVER (PARTITION BY p.uid ORDER BY s.at, s.phase)::int AS seq,
               CASE WHEN g.live THEN ${LIVE_BUDGET_S} ELSE ${INTENT_BUDGET_S} END AS budget,
               s.outcome, s.commit, s.next, s.code, s.not_before, s.message
          FROM bench_plan p JOIN ${groupsValues()} ON g.name = p.grp,
          LATERAL (
            SELECT a, 'intent' AS phase, p.t + (a - 1) * interval '1 minute' AS at, 'unknown' AS outcome, 'unknown' AS commit,
                   'none' AS next, NULL AS code, NULL::timestamptz AS not_before, NULL AS message
              FROM generate_series(1, p.n) AS a
            UNION ALL
            SELECT a, 'outcome', p.t + (a - 1) * interval '1 minute' + interval '8 seconds',
                   CASE WHEN a < p.n THEN 'retryable' ELSE g.l_outcome END, CASE WHEN a < p.n THEN 'not_committed' ELSE g.l_commit END,
                   CASE WHEN a < p.n THEN 'wait_and_retry' ELSE g.l_next END, CASE WHEN a < p.n THEN 'RATE_LIMITED' ELSE g.l_code END,
                   CASE WHEN a < p.n OR g.l_outcome = 'retryable' THEN p.t + (a - 1) * interval '1 minute' + interval '38 seconds' END,
                   CASE WHEN a = p.n THEN g.l_message END
              FROM generate_series(1, p.n) AS a WHERE a < p.n OR g.l_outcome IS NOT NULL
            UNION ALL
            SELECT p.n, 'probe', p.t + (p.n - 1) * interval '1 minute' + interval '128 seconds', 'ok', 'committed', 'none', NULL, NULL, NULL
             WHERE g.then_ = 'probe'
          ) AS s
      ) AS r`;
}

/** Operator actions: the group's own (after the last outcome), then an assignment where the plan has one. */
function actionsFromPlan(): string {
  const after = (seconds: number) => `p.t + (p.n - 1) * interval '1 minute' + interval '${seconds} seconds'`;
  return `INSERT INTO invocation_actions (runtime_id, id, invocation_uid, seq, action, actor, at, from_status, to_status, note, payload)
    SELECT x.runtime_id, gen_random_uuid(), x.uid, x.records + row_number() OVER (PARTITION BY x.uid ORDER BY x.at), x.action, x.actor, x.at,
           x.from_status, x.to_status, x.note, jsonb_build_object('action', x.body)
      FROM (
        SELECT p.runtime_id, p.uid, p.records, g.then_ AS action, 'ops' || (p.i % 4) || '@example.com' AS actor, ${after(128)} AS at,
               'outcome_unknown' AS from_status, g.status AS to_status,
               CASE g.then_ WHEN 'escalate' THEN ${lit(NOTE.escalate)} WHEN 'mark_reconciled' THEN ${lit(NOTE.mark_reconciled)} END AS note,
               CASE g.then_
                 WHEN 'request_verification' THEN jsonb_build_object('action', 'request_verification')
                 WHEN 'escalate' THEN jsonb_build_object('action', 'escalate', 'note', ${lit(NOTE.escalate)})
                 ELSE jsonb_build_object('action', 'mark_reconciled', 'commit_state', 'committed', 'note', ${lit(NOTE.mark_reconciled)}) END AS body
          FROM bench_plan p JOIN ${groupsValues()} ON g.name = p.grp
         WHERE g.then_ IN ('request_verification', 'escalate', 'mark_reconciled')
        UNION ALL
        SELECT p.runtime_id, p.uid, p.records, 'assign', 'lead@example.com', ${after(188)},
               CASE WHEN g.name = 'stalled' THEN 'stalled' ELSE g.status END, CASE WHEN g.name = 'stalled' THEN 'stalled' ELSE g.status END,
               NULL, jsonb_build_object('action', 'assign', 'assignee', p.assignee)
          FROM bench_plan p JOIN ${groupsValues()} ON g.name = p.grp
         WHERE p.assignee IS NOT NULL
      ) AS x`;
}

/**
 * Every record carries its call's summary, as ingest stores it (lib/ingest/summarize.ts, a tool without a
 * template: its first scalar arguments), so every queue row has one to show.
 */
const SUMMARY = (i: string) =>
  `'amount ' || (100 + ${i} % 9900) || ' · currency EUR · customer cus_' || lpad((${i} % 5000)::text, 4, '0')`;

/** The derived columns: what lib/outcome/fold.ts makes of the records and actions above. */
function invocationsFromPlan(): string {
  const lastIntent = "p.t + (p.n - 1) * interval '1 minute'";
  const lastOutcome = `${lastIntent} + interval '8 seconds'`;
  const after = `${lastIntent} + interval '128 seconds'`;
  return `INSERT INTO invocations (id, runtime_id, invocation_id, task_id, tool, effect_class, idempotency_key, status, commit_state,
                           next_action, version, conflict, attempt_count, first_seen_at, last_attempt_at, status_since, stall_at,
                           not_before, assignee, user_message, last_code, resolution, summary)
    SELECT p.uid, p.runtime_id, p.invocation_id, p.task_id, p.tool, p.effect_class, p.idem, g.status, g.commit_state, g.next_action,
           p.records + p.actions, false, p.n, p.t,
           CASE WHEN g.then_ = 'probe' THEN ${after} WHEN g.l_outcome IS NULL THEN ${lastIntent} ELSE ${lastOutcome} END,
           CASE WHEN g.then_ IS NOT NULL THEN ${after} WHEN g.l_outcome IS NULL THEN ${lastIntent} ELSE ${lastOutcome} END,
           CASE WHEN g.l_outcome IS NULL THEN ${lastIntent} + CASE WHEN g.live THEN ${LIVE_BUDGET_S} ELSE ${INTENT_BUDGET_S} END * interval '1 second' END,
           CASE WHEN g.status = 'retry_scheduled' THEN ${lastIntent} + interval '38 seconds' END,
           p.assignee, g.l_message, coalesce(g.l_code, CASE WHEN p.n > 1 THEN 'RATE_LIMITED' END),
           CASE g.then_
             WHEN 'probe' THEN jsonb_build_object('commit_state', 'committed', 'by', 'probe', 'actor', NULL, 'at', ${iso(after)}, 'note', NULL)
             WHEN 'mark_reconciled' THEN jsonb_build_object('commit_state', 'committed', 'by', 'operator', 'actor', 'ops' || (p.i % 4) || '@example.com',
                                                           'at', ${iso(after)}, 'note', ${lit(NOTE.mark_reconciled)}) END,
           ${SUMMARY("p.i")}
      FROM bench_plan p JOIN ${groupsValues()} ON g.name = p.grp`;
}

export async function generateWorkload(
  url: string,
  workload = DEFAULT_WORKLOAD,
  log: (line: string) => void = console.log,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const step = async (label: string, sql: string) => {
    const started = Date.now();
    const result = await client.query(sql);
    if (label)
      log(
        `  ${label}: ${(result.rowCount ?? 0).toLocaleString("en")} rows in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
  };
  try {
    await step(
      "runtimes",
      `INSERT INTO runtimes (id, name) SELECT gen_random_uuid(), r FROM unnest(${`ARRAY[${RUNTIMES.map(lit).join(",")}]`}) AS r ON CONFLICT (name) DO NOTHING`,
    );
    await step("", PLAN);
    // Invocation i: task i/4 on runtime (i/4) % 5, tool i % 11, 1 + i % 3 attempts (one in 200 retried once more), group by a
    // hash of i; first seen over the last 30 days.
    await step(
      "plan",
      fillPlan(`SELECT i, (hashtext(i::text) & 2147483647) % 1000 AS s, 1 + i % 3 + CASE WHEN i % 200 = 0 THEN 1 ELSE 0 END AS n, 'inv-' || i AS invocation_id, 'task-' || (i / 4) AS task_id,
                       (SELECT array_agg(id ORDER BY name) FROM runtimes WHERE name = ANY(${`ARRAY[${RUNTIMES.map(lit).join(",")}]`}))[1 + (i / 4) % 5] AS runtime_id,
                       now() - interval '1 day' * ${workload.spreadDays ?? 30} * ((i % 9973)::float / 9973) - interval '10 minutes' AS t
                  FROM generate_series(${workload.first ?? 1}, ${(workload.first ?? 1) + workload.invocations - 1}) AS i`),
    );
    // The long task: 100 money invocations of one runtime, one a minute over the last two hours, 5 attempts each; a tenth still unknown.
    const first = (workload.first ?? 1) + workload.invocations;
    await step(
      "plan (big task)",
      fillPlan(`SELECT i, CASE WHEN i % 10 = 0 THEN 0 ELSE 999 END AS s, ${workload.bigTaskAttemptsEach} AS n,
                       '${BIG_TASK}-inv-' || (i - ${first} + 1) AS invocation_id, '${BIG_TASK}' AS task_id,
                       (SELECT id FROM runtimes WHERE name = 'billing-agent') AS runtime_id,
                       now() - interval '2 hours' + (i - ${first}) * interval '1 minute' AS t
                  FROM generate_series(${first}, ${first + workload.bigTaskInvocations - 1}) AS i`),
    );
    await step("", `UPDATE bench_plan SET tool = 'charge_card', effect_class = 'money' WHERE task_id = '${BIG_TASK}'`);
    // Loading into tables without their secondary indexes and building those afterwards is several
    // times faster than keeping them up to date row by row (the trigram index most of all).
    const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes x
        WHERE schemaname = current_schema() AND tablename IN ('invocations', 'attempts', 'invocation_actions', 'invocation_search')
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = x.indexname)`,
    );
    for (const index of indexes) await step("", `DROP INDEX "${index.indexname}"`);
    await step("invocations", invocationsFromPlan());
    await step("attempts", attemptsFromPlan());
    await step("audit entries", actionsFromPlan());
    // What the write path's statement (lib/write/write-statement.ts) writes beside a new invocation.
    await step(
      "search rows",
      `INSERT INTO invocation_search (runtime_id, invocation_uid, ids) SELECT runtime_id, id, task_id || ' ' || invocation_id || ' ' || coalesce(idempotency_key, '') FROM invocations
       ON CONFLICT DO NOTHING`,
    );
    const rebuilt = Date.now();
    // A partitioned table's index reads "ON ONLY" in pg_indexes, which would make it for the parent alone.
    for (const index of indexes) await step("", index.indexdef.replace(" ON ONLY ", " ON "));
    log(`  ${indexes.length} indexes rebuilt in ${((Date.now() - rebuilt) / 1000).toFixed(1)} s`);
    await step(
      "tasks",
      `INSERT INTO tasks (runtime_id, task_id, first_seen_at, last_seen_at)
       SELECT runtime_id, task_id, min(first_seen_at), max(last_attempt_at) FROM invocations GROUP BY runtime_id, task_id
       ON CONFLICT DO NOTHING`,
    );
    await step("", "DROP TABLE bench_plan");
    // As autovacuum leaves a table at rest: statistics, and a visibility map for index-only scans.
    await step("vacuum analyze", "VACUUM ANALYZE");
    // Writes the load's dirty pages out now rather than during the measurements (needs superuser or pg_checkpoint).
    await step("checkpoint", "CHECKPOINT").catch((e: Error) =>
      log(`  no checkpoint (${e.message}): the first measurements may pay for it`),
    );
  } finally {
    await client.end();
  }
}
