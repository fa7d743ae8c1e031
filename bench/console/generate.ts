import pg from "pg";

// Fills a bench database with a realistic console workload, fast: PostgreSQL
// generates the rows itself (INSERT … SELECT over generate_series), so a
// million attempts take seconds, not a million round trips.
//
// Shape: 5 runtimes, ~62,500 tasks, 250,000 invocations, 1,000,000 attempts
// (intent + outcome for one or two transport attempts), audit entries on the
// settled and queued ones, and one task with 1,000 attempts for the timeline.

export type Workload = { invocations: number; attemptsPerInvocation: number; bigTaskAttempts: number };
export const DEFAULT_WORKLOAD: Workload = { invocations: 250_000, attemptsPerInvocation: 4, bigTaskAttempts: 1_000 };
export const BIG_TASK = "bench-task-1000";

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
  ["update_crm_contact", "create"],
] as const;

// Cumulative shares of statuses (per mille): most settled, about a tenth needing a person.
const statuses: Array<[number, string, string, string]> = [
  [30, "outcome_unknown", "unknown", "verify_operation"],
  [40, "pending", "unknown", "none"], // stall_at in the past: stalled
  [45, "partially_applied", "partial", "verify_operation"],
  [50, "awaiting_approval", "not_committed", "request_approval"],
  [55, "verifying", "unknown", "verify_operation"],
  [60, "escalated", "unknown", "escalate"],
  [70, "pending", "unknown", "none"], // within its window
  [80, "needs_input", "not_committed", "correct_input"],
  [100, "retry_scheduled", "not_committed", "wait_and_retry"],
  [130, "failed", "not_committed", "choose_alternative"],
  [145, "reconciled", "committed", "none"],
  [1000, "succeeded", "committed", "none"],
];

function statusCase(column: string, pick: 1 | 2 | 3): string {
  return `CASE ${statuses.map(([upTo, ...rest]) => `WHEN ${column} < ${upTo} THEN '${rest[pick - 1]}'`).join(" ")} END`;
}

export async function generateWorkload(url: string, workload = DEFAULT_WORKLOAD, log: (line: string) => void = console.log): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const step = async (label: string, sql: string) => {
    const started = Date.now();
    const result = await client.query(sql);
    log(`  ${label}: ${result.rowCount ?? 0} rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  };
  try {
    const toolArray = `ARRAY[${tools.map(([t]) => `'${t}'`).join(",")}]`;
    const classArray = `ARRAY[${tools.map(([, c]) => `'${c}'`).join(",")}]`;
    await step(
      "runtimes",
      `INSERT INTO runtimes (id, name) SELECT gen_random_uuid(), r FROM unnest(ARRAY['billing-agent','support-agent','ops-agent','crm-sync','mailer']) AS r
       ON CONFLICT (name) DO NOTHING`,
    );
    // Invocation i: task i/4 (on one runtime), tool i%11, status by a hash of i; times spread over 30 days.
    await step(
      "invocations",
      `INSERT INTO invocations (id, runtime_id, invocation_id, task_id, tool, effect_class, idempotency_key, status, commit_state,
                               next_action, version, conflict, attempt_count, first_seen_at, last_attempt_at, status_since, stall_at,
                               not_before, assignee, user_message, last_code, resolution)
       SELECT gen_random_uuid(), rt.id, 'inv-' || i, 'task-' || (i / 4), (${toolArray})[1 + i % 11], (${classArray})[1 + i % 11],
              'key-' || md5(i::text), ${statusCase("s", 1)}, ${statusCase("s", 2)}, ${statusCase("s", 3)},
              1 + (i % 3), s BETWEEN 145 AND 146, 1 + (i % 2), t, t + interval '20 seconds', t + interval '20 seconds',
              CASE WHEN s BETWEEN 30 AND 39 THEN t + interval '5 minutes' WHEN s BETWEEN 60 AND 69 THEN now() + interval '1 hour' END,
              NULL, CASE WHEN s < 60 AND i % 7 = 0 THEN 'ops' || (i % 4) || '@example.com' END,
              CASE WHEN s < 60 THEN 'The request is being checked before anything is sent again.' END,
              CASE WHEN s < 60 THEN 'OUTCOME_UNKNOWN' END,
              CASE WHEN s BETWEEN 130 AND 144 THEN jsonb_build_object('commit_state','committed','by','operator','actor','ops1@example.com','at',t,'note','found in ledger') END
         FROM (SELECT i, (hashtext(i::text) & 2147483647) % 1000 AS s,
                      now() - (interval '30 days' * ((i % 9973)::float / 9973)) AS t
                 FROM generate_series(1, ${workload.invocations}) AS i) AS g
         JOIN LATERAL (SELECT id FROM runtimes ORDER BY name OFFSET ((g.i / 4) % 5) LIMIT 1) rt ON true`,
    );
    await step(
      "tasks",
      `INSERT INTO tasks (runtime_id, task_id, first_seen_at, last_seen_at)
       SELECT runtime_id, task_id, min(first_seen_at), max(last_attempt_at) FROM invocations GROUP BY runtime_id, task_id
       ON CONFLICT DO NOTHING`,
    );
    // Attempts: for each invocation, (attemptsPerInvocation / 2) transport attempts, each an intent and an outcome.
    const perAttempt = Math.max(1, Math.floor(workload.attemptsPerInvocation / 2));
    await step(
      "attempts",
      `INSERT INTO attempts (id, invocation_uid, runtime_id, event_key, event_id, seq, attempt_id, attempt_no, phase, at, received_at, tool,
                            effect_class, idempotency_key, budget_left_s, dialect, outcome, commit_state, code, retry_directive,
                            next_action, dispatch_stage, safe_details, agent_message, user_message, items, envelope)
       SELECT gen_random_uuid(), v.id, v.runtime_id, v.invocation_id || ':a' || a || ':' || ph, v.invocation_id || ':a' || a || ':' || ph, 1,
              v.invocation_id || '-a' || a, a, ph, v.first_seen_at + (a * 10 + CASE ph WHEN 'intent' THEN 0 ELSE 8 END) * interval '1 second',
              v.first_seen_at + (a * 10 + 9) * interval '1 second', v.tool, v.effect_class, v.idempotency_key, 42,
              CASE WHEN ph = 'intent' THEN 'settle' ELSE (ARRAY['settle','seed002','mcp','rfc9457','anthropic','openai'])[1 + (a + length(v.invocation_id)) % 6] END,
              CASE WHEN ph = 'intent' THEN 'unknown' WHEN a < ${perAttempt} THEN 'retryable' ELSE 'ok' END,
              CASE WHEN ph = 'intent' THEN 'unknown' WHEN a < ${perAttempt} THEN 'not_committed' ELSE v.commit_state END,
              CASE WHEN ph = 'outcome' AND a < ${perAttempt} THEN 'RATE_LIMITED' ELSE v.last_code END,
              CASE WHEN ph = 'outcome' AND a < ${perAttempt} THEN 'after_delay' ELSE 'never' END,
              CASE WHEN ph = 'intent' THEN 'none' WHEN a < ${perAttempt} THEN 'wait_and_retry' ELSE v.next_action END,
              CASE WHEN ph = 'intent' THEN 'pre_dispatch' ELSE 'dispatched' END,
              jsonb_build_object('attempt_id', v.invocation_id || '-a' || a),
              CASE WHEN ph = 'outcome' THEN '503 from upstream after 8.1s; no response body' END,
              CASE WHEN ph = 'outcome' THEN v.user_message END, '[]'::jsonb,
              CASE WHEN ph = 'outcome' THEN jsonb_build_object('ok', false, 'code', 'OUTCOME_UNKNOWN', 'commit_state', v.commit_state,
                     'next_action', v.next_action, 'operation_ref', v.idempotency_key, 'retry', jsonb_build_object('directive','never','max_attempts_remaining',0),
                     'agent_message', 'The write may have completed. Verify operation_ref before any new write.') END
         FROM invocations v, generate_series(1, ${perAttempt}) AS a, unnest(ARRAY['intent','outcome']) AS ph`,
    );
    await step(
      "audit entries",
      `INSERT INTO invocation_actions (id, invocation_uid, seq, action, actor, at, from_status, to_status, note, payload)
       SELECT gen_random_uuid(), id, version, 'request_verification', 'ops' || (hashtext(invocation_id) & 3) || '@example.com',
              last_attempt_at + interval '2 minutes', 'outcome_unknown', 'verifying', 'please probe', '{"action":{"action":"request_verification"}}'::jsonb
         FROM invocations WHERE status IN ('verifying', 'reconciled', 'escalated')`,
    );
    await generateBigTask(client, workload.bigTaskAttempts, step);
    await step("analyze", "ANALYZE");
  } finally {
    await client.end();
  }
}

async function generateBigTask(client: pg.Client, attempts: number, step: (label: string, sql: string) => Promise<void>) {
  // 100 invocations × (attempts / 100) attempts each: a long-running task with retries, probes and settled ones.
  const perInvocation = Math.max(2, Math.floor(attempts / 100));
  await step(
    "big task invocations",
    `INSERT INTO invocations (id, runtime_id, invocation_id, task_id, tool, effect_class, idempotency_key, status, commit_state, next_action,
                             version, attempt_count, first_seen_at, last_attempt_at, status_since)
     SELECT gen_random_uuid(), (SELECT id FROM runtimes WHERE name = 'billing-agent'), '${BIG_TASK}-inv-' || i, '${BIG_TASK}',
            'charge_card', 'money', 'big-' || i, CASE WHEN i % 10 = 0 THEN 'outcome_unknown' ELSE 'succeeded' END,
            CASE WHEN i % 10 = 0 THEN 'unknown' ELSE 'committed' END, CASE WHEN i % 10 = 0 THEN 'verify_operation' ELSE 'none' END,
            1, ${perInvocation / 2}, now() - interval '2 hours' + i * interval '1 minute', now() - interval '2 hours' + i * interval '1 minute' + interval '50 seconds',
            now() - interval '2 hours' + i * interval '1 minute'
       FROM generate_series(1, 100) AS i`,
  );
  await step(
    "big task attempts",
    `INSERT INTO attempts (id, invocation_uid, runtime_id, event_key, seq, attempt_no, phase, at, tool, effect_class, dialect, outcome,
                          commit_state, retry_directive, next_action, envelope)
     SELECT gen_random_uuid(), v.id, v.runtime_id, v.invocation_id || ':' || n, 1, 1 + (n - 1) / 2,
            CASE WHEN n % 2 = 1 THEN 'intent' ELSE 'outcome' END, v.first_seen_at + n * interval '2 seconds', v.tool, v.effect_class,
            'seed002', CASE WHEN n % 2 = 1 THEN 'unknown' ELSE 'retryable' END, CASE WHEN n % 2 = 1 THEN 'unknown' ELSE 'not_committed' END,
            'after_delay', 'wait_and_retry', jsonb_build_object('outcome','retryable','effect_applied','no','retry_after_s',1)
       FROM invocations v, generate_series(1, ${perInvocation}) AS n WHERE v.task_id = '${BIG_TASK}'`,
  );
  await step(
    "big task row",
    `INSERT INTO tasks (runtime_id, task_id, first_seen_at, last_seen_at)
     SELECT runtime_id, task_id, min(first_seen_at), max(last_attempt_at) FROM invocations WHERE task_id = '${BIG_TASK}' GROUP BY 1, 2
     ON CONFLICT DO NOTHING`,
  );
}
