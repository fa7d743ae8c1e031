// The SQL behind every trust metric (SPEC §6). Each metric is one source: a
// SELECT of the events it counts, one row per event, with the columns
//   uid (invocation), runtime_id, tool, at (when it counted), detail, seconds
// The numbers aggregate a source and the case lists read the same source, so
// a number and the invocations behind it can never disagree.
//
// Parameters, in every query: $1 from, $2 to (exclusive), $3 tool or null,
// $4 runtime id or null, $5 now (for "still stalled"), $6 the stall window (s).

// Every query names every parameter (PostgreSQL must know the type of each one it is sent).
const declare = (extra: string[]) =>
  `WITH params AS (SELECT $1::timestamptz, $2::timestamptz, $3::text, $4::uuid, $5::timestamptz, $6::int${extra.map((e) => `, ${e}`).join("")}) `;
const withParams = (sql: string) => `${declare(["$7::text"])}${sql}`;

/** Narrows a table alias to the tool and runtime filters. */
const filter = (a: string) => `($3::text IS NULL OR ${a}.tool = $3::text) AND ($4::uuid IS NULL OR ${a}.runtime_id = $4::uuid)`;
const inRange = (col: string) => `${col} >= $1::timestamptz AND ${col} < $2::timestamptz`;
const DEFINITE = `('committed', 'not_committed')`;

/**
 * A transition that starts an unknown outcome: into outcome_unknown or
 * partially_applied; into escalated with the commit state unknown (the
 * runtime said escalate, or its probe failed); or into verifying or
 * reconciled straight from `pending` (a stalled intent taken up by a person
 * or a probe) or from nothing (the unknown outcome and the probe that settled
 * it arrived in one batch, so no unknown state was ever stored).
 * Migration `trust_metrics_entry` indexes exactly this predicate; keep them equal.
 */
export const UNKNOWN_ENTRY = `(t.to_status IN ('outcome_unknown', 'partially_applied')
    OR (t.to_status = 'escalated' AND t.commit_state = 'unknown')
    OR ((t.from_status IS NULL OR t.from_status = 'pending') AND t.to_status IN ('verifying', 'reconciled')))`;

// When the unknown began, for a transition that does not say it (from nothing
// or from pending): its first unknown or partial outcome record, else the
// stall of its intent (the intent's `at` plus its budget, or the stall
// window; SPEC §4 computes a stall at read time, it is not stored).
const hiddenStart = `least(t.at,
    coalesce((SELECT min(a.at) FROM attempts a
               WHERE a.invocation_uid = t.invocation_uid AND a.phase = 'outcome' AND a.commit_state IN ('unknown', 'partial') AND a.at <= t.at), t.at),
    coalesce((SELECT a.at + coalesce(a.budget_left_s, $6::int) * interval '1 second' FROM attempts a
               WHERE a.invocation_uid = t.invocation_uid AND a.phase = 'intent' AND a.at <= t.at
               ORDER BY a.at DESC LIMIT 1), t.at))`;

/**
 * One row per invocation whose outcome became unknown before `to`: when it
 * started (its first unknown state), when and by whom it was first settled
 * afterwards (a definite commit state), and when it was first escalated.
 * Invocations still stalled (pending past stall_at, no transition since) start
 * at stall_at.
 */
const episodes = `
  SELECT e.uid, e.runtime_id, e.tool, e.entered_at, s.settled_at, s.settled_by, s.escalated_at
    FROM (
      SELECT DISTINCT ON (t.invocation_uid) t.invocation_uid AS uid, t.runtime_id, t.tool, t.id,
             CASE WHEN (t.from_status IS NULL OR t.from_status = 'pending') AND t.to_status IN ('verifying', 'reconciled', 'escalated')
                  THEN ${hiddenStart} ELSE t.at END AS entered_at
        FROM invocation_transitions t
       WHERE ${UNKNOWN_ENTRY} AND t.at < $2::timestamptz AND ${filter("t")}
       ORDER BY t.invocation_uid, t.id
    ) AS e
    LEFT JOIN LATERAL (
      SELECT min(x.at) FILTER (WHERE x.commit_state IN ${DEFINITE}) AS settled_at,
             (array_agg(CASE WHEN x.to_status = 'reconciled' AND x.resolution_by = 'operator' THEN 'operator' ELSE 'probe' END ORDER BY x.id)
                FILTER (WHERE x.commit_state IN ${DEFINITE}))[1] AS settled_by,
             min(x.at) FILTER (WHERE x.to_status = 'escalated') AS escalated_at
        FROM invocation_transitions x
       WHERE x.invocation_uid = e.uid AND x.id >= e.id
    ) AS s ON true
  UNION ALL
  SELECT i.id, i.runtime_id, i.tool, i.stall_at, NULL::timestamptz, NULL::text, NULL::timestamptz
    FROM invocations i
   WHERE i.status = 'pending' AND i.stall_at <= least($2::timestamptz, $5::timestamptz) AND ${filter("i")}
     AND NOT EXISTS (SELECT 1 FROM invocation_transitions t WHERE t.invocation_uid = i.id AND ${UNKNOWN_ENTRY})`;

/** How an unknown outcome stood at `to`: settled (by whom), escalated, or still open. */
const fate = `CASE WHEN ep.settled_at < $2::timestamptz THEN CASE ep.settled_by WHEN 'operator' THEN 'resolved_by_operator' ELSE 'resolved_by_probe' END
                   WHEN ep.escalated_at < $2::timestamptz THEN 'escalated' ELSE 'open' END`;

const unknownOutcomes = `
  SELECT ep.uid, ep.runtime_id, ep.tool, ep.entered_at AS at, ${fate} AS detail, NULL::float8 AS seconds
    FROM (${episodes}) AS ep
   WHERE ${inRange("ep.entered_at")}`;

const pendingRecovery = `
  SELECT ep.uid, ep.runtime_id, ep.tool, ep.settled_at AS at, 'settled by ' || ep.settled_by AS detail,
         extract(epoch FROM ep.settled_at - ep.entered_at)::float8 AS seconds
    FROM (${episodes}) AS ep
   WHERE ${inRange("ep.settled_at")}`;

const guardDenials = `
  SELECT NULL::uuid AS uid, g.runtime_id, g.tool, g.at, g.reason AS detail, NULL::float8 AS seconds, g.invocation_id AS ref
    FROM guard_checks g
   WHERE NOT g.allow AND ${inRange("g.at")} AND ${filter("g")}`;

const probeFound = `
  SELECT t.invocation_uid AS uid, t.runtime_id, t.tool, t.at, 'a probe found the effect' AS detail, NULL::float8 AS seconds
    FROM invocation_transitions t
   WHERE t.to_status = 'reconciled' AND t.commit_state = 'committed' AND t.resolution_by = 'probe'
     AND ${inRange("t.at")} AND ${filter("t")}`;

// Seed 002 fixture 2: "send the same idempotency key twice: one effect, two ok
// returns". Read from the records, never from text: a committed outcome of an
// attempt after an earlier attempt of the same invocation had already
// committed (by its outcome or a probe) is the receiver returning the original
// result. Migration `trust_metrics` indexes both sides.
const receiverReplays = `
  SELECT a.invocation_uid AS uid, a.runtime_id, a.tool, a.at,
         'attempt ' || a.attempt_no || ' answered committed again' AS detail, NULL::float8 AS seconds
    FROM attempts a
   WHERE a.phase = 'outcome' AND a.commit_state = 'committed' AND a.attempt_no > 1
     AND ${inRange("a.at")} AND ${filter("a")}
     AND EXISTS (SELECT 1 FROM attempts b
                  WHERE b.invocation_uid = a.invocation_uid AND b.attempt_no < a.attempt_no
                    AND (b.commit_state = 'committed' OR b.probe_result = 'found'))`;

// Two committed invocations with one key: a duplicate effect may exist. A case
// counts when its second invocation committed (status_since of a committed
// invocation is when it committed: nothing changes its status afterwards but
// a conflict, which makes it unknown again).
const duplicateGroups = `
  SELECT (array_agg(i.id ORDER BY i.status_since, i.id))[2] AS uid, i.runtime_id, min(i.tool) AS tool,
         (array_agg(i.status_since ORDER BY i.status_since, i.id))[2] AS at,
         count(*) || ' committed invocations with key ' || i.idempotency_key AS detail, NULL::float8 AS seconds,
         array_agg(i.id) AS members
    FROM (SELECT c.runtime_id, c.idempotency_key FROM invocations c
           WHERE c.commit_state = 'committed' AND c.idempotency_key IS NOT NULL AND c.status_since < $2::timestamptz AND ${filter("c")}
           GROUP BY 1, 2 HAVING count(*) >= 2) AS k
    JOIN invocations i ON i.runtime_id = k.runtime_id AND i.idempotency_key = k.idempotency_key
   WHERE i.commit_state = 'committed' AND i.status_since < $2::timestamptz AND ${filter("i")}
   GROUP BY i.runtime_id, i.idempotency_key`;
const possibleDuplicates = `SELECT * FROM (${duplicateGroups}) AS d WHERE d.at >= $1::timestamptz`;

const escalations = `
  SELECT t.invocation_uid AS uid, t.runtime_id, t.tool, t.at, 'escalated from ' || coalesce(t.from_status, 'its first record') AS detail, NULL::float8 AS seconds
    FROM invocation_transitions t
   WHERE t.to_status = 'escalated' AND ${inRange("t.at")} AND ${filter("t")}`;

const retries = `
  SELECT i.id AS uid, i.runtime_id, i.tool, i.first_seen_at AS at, i.attempt_count || ' attempts' AS detail, greatest(i.attempt_count, 1)::float8 AS seconds
    FROM invocations i
   WHERE ${inRange("i.first_seen_at")} AND ${filter("i")}`;

// Waiting for approval: from entering awaiting_approval (the transition before) to approved or rejected.
const approvalWait = `
  SELECT t.invocation_uid AS uid, t.runtime_id, t.tool, t.at, t.to_status AS detail,
         extract(epoch FROM t.at - p.at)::float8 AS seconds
    FROM invocation_transitions t
    JOIN LATERAL (SELECT p.at FROM invocation_transitions p WHERE p.invocation_uid = t.invocation_uid AND p.id < t.id ORDER BY p.id DESC LIMIT 1) AS p ON true
   WHERE t.from_status = 'awaiting_approval' AND t.to_status IN ('approved', 'rejected') AND ${inRange("t.at")} AND ${filter("t")}`;

// The policy job (lib/jobs/apply-policies.ts) escalates what waited past its SLA as `system`, marked policy: sla.
const slaBreaches = `
  SELECT i.id AS uid, i.runtime_id, i.tool, a.at, a.note AS detail, NULL::float8 AS seconds
    FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid
   WHERE a.action = 'escalate' AND a.actor = 'system' AND a.payload ->> 'policy' = 'sla' AND ${inRange("a.at")} AND ${filter("i")}`;

export const sources = {
  guard_denials: guardDenials,
  probe_found: probeFound,
  receiver_replays: receiverReplays,
  possible_duplicate_effects: possibleDuplicates,
  unknown_outcomes: unknownOutcomes,
  pending_recovery: pendingRecovery,
  escalations,
  retries,
  approval_wait: approvalWait,
  sla_breaches: slaBreaches,
} as const;
export type SourceName = keyof typeof sources;

/** `$7`: 'hour' or 'day'. Buckets are UTC. */
const bucket = (col: string) => `date_trunc($7::text, ${col} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;

/** Events per tool and bucket; for unknown outcomes also per fate. */
export function countQuery(source: SourceName): string {
  const detail = source === "unknown_outcomes" ? "s.detail" : "NULL::text";
  return withParams(`SELECT s.tool, ${bucket("s.at")} AS bucket, ${detail} AS kind, count(*)::int AS n, sum(s.seconds)::float8 AS total
            FROM (${sources[source]}) AS s GROUP BY 1, 2, 3`);
}

/** Every measured duration with its tool, for percentiles. */
export function durationsQuery(source: "pending_recovery" | "approval_wait"): string {
  return withParams(`SELECT s.tool, s.seconds FROM (${sources[source]}) AS s WHERE s.seconds IS NOT NULL`);
}

/**
 * Queue size over time: all matching runtimes' samples summed per sampled
 * minute, then per bucket. Hourly buckets read every minute; daily ones every
 * tenth minute (a 30-day range reads 4,320 instants, not 43,200), by key.
 */
export const queueSeriesQuery = withParams(`
  SELECT ${bucket("m")} AS bucket, max(q.total)::int AS max, avg(q.total)::float8 AS avg
    FROM generate_series(date_trunc('minute', $1::timestamptz), $2::timestamptz,
                         CASE $7::text WHEN 'hour' THEN interval '1 minute' ELSE interval '10 minutes' END) AS m
    JOIN LATERAL (SELECT sum(size) AS total FROM queue_samples
                   WHERE at = m AND ($4::uuid IS NULL OR runtime_id = $4::uuid)) AS q ON q.total IS NOT NULL
   WHERE ${inRange("m")}
   GROUP BY 1`);

const UNKNOWN_FATES = ["resolved_by_probe", "resolved_by_operator", "escalated", "open"] as const;

/**
 * The invocations behind one number, newest event first: `$7` limit, `$8` offset.
 * Guard denials name the invocation that blocked the intent; a possible
 * duplicate effect lists every committed invocation of its key.
 */
export function casesQuery(metric: string): string {
  return `${declare(["$7::int", "$8::int"])}${casesSelect(metric)}`;
}

function casesSelect(metric: string): string {
  const columns = `i.invocation_id, i.task_id, r.name AS runtime, s.tool, i.status, s.at, s.detail`;
  const page = `ORDER BY s.at DESC, i.invocation_id LIMIT $7::int OFFSET $8::int`;
  const join = `JOIN invocations i ON i.id = s.uid JOIN runtimes r ON r.id = i.runtime_id`;
  switch (metric) {
    case "guard_denials":
      return `SELECT ${columns} FROM (${guardDenials}) AS s
                JOIN invocations i ON i.runtime_id = s.runtime_id AND i.invocation_id = s.ref JOIN runtimes r ON r.id = i.runtime_id ${page}`;
    case "duplicates_prevented":
      return `SELECT ${columns} FROM (
                SELECT i2.id AS uid, g.runtime_id, g.tool, g.at, 'guard denied: ' || g.detail AS detail FROM (${guardDenials}) AS g
                  JOIN invocations i2 ON i2.runtime_id = g.runtime_id AND i2.invocation_id = g.ref
                UNION ALL SELECT uid, runtime_id, tool, at, detail FROM (${probeFound}) AS p
                UNION ALL SELECT uid, runtime_id, tool, at, detail FROM (${receiverReplays}) AS rr) AS s ${join} ${page}`;
    case "possible_duplicate_effects":
      return `SELECT ${columns} FROM (SELECT m AS uid, d.tool, d.at, d.detail FROM (${possibleDuplicates}) AS d, unnest(d.members) AS m) AS s ${join} ${page}`;
    case "retries":
      return `SELECT ${columns} FROM (${retries}) AS s ${join} WHERE s.seconds > 1 ${page}`;
    case "pending_recovery":
    case "approval_wait":
      return `SELECT i.invocation_id, i.task_id, r.name AS runtime, s.tool, i.status, s.at,
                     s.detail || ' after ' || round(s.seconds::numeric, 1) || ' s' AS detail FROM (${sources[metric]}) AS s ${join} ${page}`;
    default: {
      if ((UNKNOWN_FATES as readonly string[]).includes(metric)) {
        return `SELECT ${columns} FROM (${unknownOutcomes}) AS s ${join} WHERE s.detail = '${metric}' ${page}`;
      }
      return `SELECT ${columns} FROM (${sources[metric as SourceName]}) AS s ${join} ${page}`;
    }
  }
}
