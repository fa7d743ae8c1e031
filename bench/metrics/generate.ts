import pg from "pg";
import { DEFAULT_WORKLOAD, generateWorkload, type Workload } from "../console/generate";

// Data for `npm run bench:metrics`: the console workload (250,000 invocations,
// ~1,000,000 attempts over the last 30 days, bench/console/generate.ts) plus
// what the trust metrics read and that workload does not write:
// - a few decisions the metrics count: approvals (half the awaiting_approval
//   group is approved by a person, a few minutes later), SLA escalations by
//   `system` (a third of the still-unknown ones), and 250 keys committed twice;
// - invocation_transitions, derived from the records and actions exactly as
//   the trigger would have recorded the folded states (status changes only);
// - guard_checks: one allowed write-ahead per invocation, and a denial for 3%;
// - queue_samples: one per runtime per minute over the 30 days.
// Everything is INSERT … SELECT, so PostgreSQL does the work.

const APPROVE = `
  WITH picked AS (
    SELECT i.runtime_id, i.id, i.status_since + ((hashtext(i.invocation_id) & 1023) + 60) * interval '1 second' AS at, i.version
      FROM invocations i WHERE i.status = 'awaiting_approval' AND hashtext(i.invocation_id) % 2 = 0),
  acted AS (
    INSERT INTO invocation_actions (runtime_id, id, invocation_uid, seq, action, actor, at, from_status, to_status, note, payload)
    SELECT p.runtime_id, gen_random_uuid(), p.id, p.version + 1, 'approve', 'lead@example.com', p.at, 'awaiting_approval', 'approved', NULL,
           jsonb_build_object('action', jsonb_build_object('action', 'approve'))
      FROM picked p RETURNING invocation_uid, at)
  UPDATE invocations i SET status = 'approved', next_action = 'none', status_since = a.at, version = i.version + 1
    FROM acted a WHERE i.id = a.invocation_uid`;

const SLA_ESCALATE = `
  WITH picked AS (
    SELECT i.runtime_id, i.id, i.status_since + interval '30 minutes' AS at, i.version
      FROM invocations i WHERE i.status = 'outcome_unknown' AND hashtext(i.invocation_id) % 3 = 0
       AND i.status_since + interval '30 minutes' < now()),
  acted AS (
    INSERT INTO invocation_actions (runtime_id, id, invocation_uid, seq, action, actor, at, from_status, to_status, note, payload)
    SELECT p.runtime_id, gen_random_uuid(), p.id, p.version + 1, 'escalate', 'system', p.at, 'outcome_unknown', 'escalated',
           'Overdue: 30 min in the queue (policy for its effect class).',
           jsonb_build_object('action', jsonb_build_object('action', 'escalate', 'note', 'Overdue'), 'policy', 'sla')
      FROM picked p RETURNING invocation_uid, at)
  UPDATE invocations i SET status = 'escalated', next_action = 'escalate', status_since = a.at, version = i.version + 1
    FROM acted a WHERE i.id = a.invocation_uid`;

// inv-N with N % 1000 = 1 shares the key of inv-(N-1) (same runtime: i/4 is equal) when both committed.
const DUPLICATE_KEYS = `
  UPDATE invocations i SET idempotency_key = p.idempotency_key
    FROM invocations p
   WHERE i.invocation_id ~ '^inv-[0-9]+$' AND substr(i.invocation_id, 5)::int % 1000 = 1
     AND p.invocation_id = 'inv-' || (substr(i.invocation_id, 5)::int - 1) AND p.runtime_id = i.runtime_id
     AND i.commit_state = 'committed' AND p.commit_state = 'committed'`;

// The state each record or action leads to (lib/outcome/lifecycle.ts for the
// shapes this workload has), then the changes between consecutive states.
const TRANSITIONS = `
  INSERT INTO invocation_transitions (invocation_uid, runtime_id, tool, effect_class, from_status, to_status, commit_state, resolution_by, version, at, recorded_at, fanned_out)
  SELECT s.uid, i.runtime_id, i.tool, i.effect_class, s.prev, s.status, s.commit_state, s.by, s.n, s.at, s.at, true
    FROM (
      SELECT e.*, lag(e.status) OVER w AS prev, lag(e.commit_state) OVER w AS prev_commit, row_number() OVER w AS n
        FROM (
          SELECT a.invocation_uid AS uid, a.at, a.seq,
                 CASE WHEN a.phase = 'intent' THEN 'pending'
                      WHEN a.phase = 'probe' THEN 'reconciled'
                      WHEN a.commit_state = 'committed' THEN 'succeeded'
                      WHEN a.commit_state = 'partial' THEN 'partially_applied'
                      WHEN a.commit_state = 'unknown' THEN CASE WHEN a.next_action = 'escalate' THEN 'escalated' ELSE 'outcome_unknown' END
                      WHEN a.next_action = 'correct_input' THEN 'needs_input'
                      WHEN a.next_action = 'request_approval' THEN 'awaiting_approval'
                      WHEN a.next_action = 'wait_and_retry' THEN 'retry_scheduled'
                      ELSE 'failed' END AS status,
                 CASE WHEN a.phase = 'intent' THEN 'unknown' WHEN a.phase = 'probe' THEN 'committed' ELSE a.commit_state END AS commit_state,
                 CASE WHEN a.phase = 'probe' THEN 'probe' END AS by
            FROM attempts a
          UNION ALL
          SELECT x.invocation_uid, x.at, x.seq, x.to_status,
                 CASE WHEN x.action = 'mark_reconciled' THEN 'committed' WHEN x.to_status = 'approved' THEN 'not_committed' ELSE 'unknown' END,
                 CASE WHEN x.action = 'mark_reconciled' THEN 'operator' END
            FROM invocation_actions x WHERE x.action NOT IN ('assign', 'unassign', 'comment')
        ) AS e
      WINDOW w AS (PARTITION BY e.uid ORDER BY e.at, e.seq)
    ) AS s
    JOIN invocations i ON i.id = s.uid
   WHERE s.prev IS NULL OR s.prev <> s.status OR s.prev_commit <> s.commit_state`;

const GUARD_CHECKS = `
  INSERT INTO guard_checks (id, runtime_id, task_id, invocation_id, tool, idempotency_key, allow, reason, at)
  SELECT gen_random_uuid(), i.runtime_id, i.task_id, i.invocation_id, i.tool, i.idempotency_key, true, NULL, i.first_seen_at
    FROM invocations i WHERE i.idempotency_key IS NOT NULL
  UNION ALL
  SELECT gen_random_uuid(), i.runtime_id, i.task_id, i.invocation_id, i.tool, i.idempotency_key, false,
         CASE WHEN i.commit_state = 'committed' THEN 'already_committed' WHEN i.status = 'pending' THEN 'in_flight' ELSE 'outcome_unknown' END,
         least(i.last_attempt_at + interval '90 seconds', now())
    FROM invocations i WHERE i.idempotency_key IS NOT NULL AND hashtext(i.id::text) % 33 = 0`;

const QUEUE_SAMPLES = `
  INSERT INTO queue_samples (at, runtime_id, size)
  SELECT m, r.id, 40 + (hashtext(r.name || m::text) & 15) + (extract(hour FROM m)::int % 12)
    FROM runtimes r, generate_series(date_trunc('minute', now()) - interval '30 days', date_trunc('minute', now()), interval '1 minute') AS m
  ON CONFLICT DO NOTHING`;

export async function generateMetricsWorkload(
  url: string,
  log: (line: string) => void = console.log,
  workload: Workload = DEFAULT_WORKLOAD,
): Promise<void> {
  await generateWorkload(url, workload, log);
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
    // The transitions are derived below from the final records and actions, in one pass (Settle writes them in
    // its write path, not by trigger: nothing records the updates below on its own).
    await step("approvals", APPROVE);
    await step("SLA escalations", SLA_ESCALATE);
    await step("keys committed twice", DUPLICATE_KEYS);
    await step("transitions", TRANSITIONS);
    await step("guard checks", GUARD_CHECKS);
    await step("queue samples", QUEUE_SAMPLES);
    await step("", "VACUUM ANALYZE");
  } finally {
    await client.end();
  }
}
