import { invocationStatuses, stalledSql } from "../outcome/status";

// The SQL behind every trust metric (docs/outcome-model.md §6). Each metric is one source: a
// SELECT of the events it counts, one row per event, with the columns
//   uid (invocation), runtime_id, tool, at (when it counted), detail, seconds
// The numbers aggregate a source and the case lists read the same source, so
// a number and the invocations behind it can never disagree. The rollups
// (metrics-rollup-sql.ts) store what these sources give per hour or per
// invocation, computed by the same SQL.
//
// Parameters, in every query (`declare`):
//   $1 from, $2 to (exclusive), $3 tool or null, $4 runtime id or null,
//   $5 now (for "still stalled"), $6 the stall window (s), $7 'hour' or 'day',
//   $8 rolled_before: invocations first seen before it have their episodes in metric_episodes,
//   $9 / $10 starts and ends of the intervals the hourly sources read raw,
//   $11 invocations whose rollups are stale (metric_dirty): read raw,
//   $12 / $13 the hours [from, to) that metric_hours serves, $14 stale hours in them.

const PARAMS = [
  "$1::timestamptz",
  "$2::timestamptz",
  "$3::text",
  "$4::uuid",
  "$5::timestamptz",
  "$6::int",
  "$7::text",
  "$8::timestamptz",
  "$9::timestamptz[]",
  "$10::timestamptz[]",
  "$11::uuid[]",
  "$12::timestamptz",
  "$13::timestamptz",
  "$14::timestamptz[]",
];
// Every query names every parameter (PostgreSQL must know the type of each one it is sent).
export const declare = (extra: string[] = []) => `WITH params AS (SELECT ${[...PARAMS, ...extra].join(", ")}) `;

/** Narrows a table alias to the tool and runtime filters. */
export const filter = (a: string) =>
  `($3::text IS NULL OR ${a}.tool = $3::text) AND ($4::uuid IS NULL OR ${a}.runtime_id = $4::uuid)`;
const inRange = (col: string) => `${col} >= $1::timestamptz AND ${col} < $2::timestamptz`;
/** The raw intervals of the hourly sources; an index range scan each. */
const segments = `unnest($9::timestamptz[], $10::timestamptz[]) AS seg(s, e)`;
const inSegment = (col: string) => `${col} >= seg.s AND ${col} < seg.e`;
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
// window; docs/outcome-model.md §4 computes a stall at read time, it is not stored).
const hiddenStart = `least(t.at,
    coalesce((SELECT min(a.at) FROM attempts a
               WHERE a.runtime_id = t.runtime_id AND a.invocation_uid = t.invocation_uid AND a.phase = 'outcome' AND a.commit_state IN ('unknown', 'partial') AND a.at <= t.at), t.at),
    coalesce((SELECT a.at + coalesce(a.budget_left_s, $6::int) * interval '1 second' FROM attempts a
               WHERE a.runtime_id = t.runtime_id AND a.invocation_uid = t.invocation_uid AND a.phase = 'intent' AND a.at <= t.at
               ORDER BY a.at DESC LIMIT 1), t.at))`;

/**
 * The unknown-outcome episode of each invocation that `selector` yields (its
 * `id` and `first_seen_at`) and that has one: when it started (its first
 * unknown state, counted once), and when and by whom it was first settled
 * afterwards (a definite commit state), and when it was first escalated.
 * An episode depends on no range: how it stood at `to` is read from these times.
 */
export function episodeRows(selector: string): string {
  return `
  SELECT e.uid, e.runtime_id, e.tool, e.first_seen_at, e.entered_at, s.settled_at,
         CASE WHEN s.settled_by = 'probe' AND EXISTS (
                SELECT 1 FROM verification_requests v
                 WHERE v.runtime_id = e.runtime_id AND v.invocation_uid = e.uid AND v.state = 'settled')
              THEN 'verifier' ELSE s.settled_by END AS settled_by,
         s.escalated_at
    FROM (
      SELECT DISTINCT ON (t.invocation_uid) t.invocation_uid AS uid, t.runtime_id, t.tool, t.id, sel.first_seen_at,
             CASE WHEN (t.from_status IS NULL OR t.from_status = 'pending') AND t.to_status IN ('verifying', 'reconciled', 'escalated')
                  THEN ${hiddenStart} ELSE t.at END AS entered_at
        FROM (${selector}) AS sel JOIN invocation_transitions t ON t.invocation_uid = sel.id
       WHERE ${UNKNOWN_ENTRY}
       ORDER BY t.invocation_uid, t.id
    ) AS e
    LEFT JOIN LATERAL (
      SELECT min(x.at) FILTER (WHERE x.commit_state IN ${DEFINITE}) AS settled_at,
             (array_agg(CASE WHEN x.to_status = 'reconciled' AND x.resolution_by = 'operator' THEN 'operator' ELSE 'probe' END ORDER BY x.id)
                FILTER (WHERE x.commit_state IN ${DEFINITE}))[1] AS settled_by,
             min(x.at) FILTER (WHERE x.to_status = 'escalated') AS escalated_at
        FROM invocation_transitions x
       WHERE x.invocation_uid = e.uid AND x.id >= e.id
    ) AS s ON true`;
}

/**
 * Every episode: metric_episodes for invocations first seen before $8 whose
 * rollup is not stale, computed here for the others (the last hour or so, and
 * stale ones), plus invocations still stalled now (pending past stall_at, no
 * transition yet), which start at stall_at and are never rolled up.
 */
const episodes = `
  SELECT m.uid, m.runtime_id, m.tool, m.entered_at, m.settled_at, m.settled_by, m.escalated_at
    FROM metric_episodes m
   WHERE m.first_seen_at < $8::timestamptz AND NOT (m.uid = ANY($11::uuid[]))
  UNION ALL
  SELECT r.uid, r.runtime_id, r.tool, r.entered_at, r.settled_at, r.settled_by, r.escalated_at
    FROM (${episodeRows(`SELECT i.id, i.first_seen_at FROM invocations i WHERE i.first_seen_at >= $8::timestamptz OR i.id = ANY($11::uuid[])`)}) AS r
  UNION ALL
  SELECT i.id, i.runtime_id, i.tool, i.stall_at, NULL::timestamptz, NULL::text, NULL::timestamptz
    FROM invocations i
   WHERE ${stalledSql("i.", "least($2::timestamptz, $5::timestamptz)")}
     AND NOT EXISTS (SELECT 1 FROM invocation_transitions t WHERE t.invocation_uid = i.id AND ${UNKNOWN_ENTRY})`;

/** How an unknown outcome stood at `to`: settled (by whom), escalated, or still open. */
const fate = `CASE WHEN ep.settled_at < $2::timestamptz
                     THEN CASE ep.settled_by WHEN 'operator' THEN 'resolved_by_operator' WHEN 'verifier' THEN 'resolved_by_verifier'
                                             ELSE 'resolved_by_probe' END
                   WHEN ep.escalated_at < $2::timestamptz THEN 'escalated' ELSE 'open' END`;

const unknownOutcomes = `
  SELECT ep.uid, ep.runtime_id, ep.tool, ep.entered_at AS at, ${fate} AS detail, NULL::float8 AS seconds
    FROM (${episodes}) AS ep
   WHERE ${inRange("ep.entered_at")} AND ${filter("ep")}`;

const pendingRecovery = `
  SELECT ep.uid, ep.runtime_id, ep.tool, ep.settled_at AS at, 'settled by ' || ep.settled_by AS detail,
         extract(epoch FROM ep.settled_at - ep.entered_at)::float8 AS seconds
    FROM (${episodes}) AS ep
   WHERE ${inRange("ep.settled_at")} AND ${filter("ep")}`;

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
// result. Migration `trust_metrics` indexes both sides. Hourly.
const receiverReplays = `
  SELECT a.invocation_uid AS uid, a.runtime_id, a.tool, a.at,
         'attempt ' || a.attempt_no || ' answered committed again' AS detail, NULL::float8 AS seconds
    FROM ${segments} JOIN attempts a ON ${inSegment("a.at")}
   WHERE a.phase = 'outcome' AND a.commit_state = 'committed' AND a.attempt_no > 1 AND ${filter("a")}
     AND EXISTS (SELECT 1 FROM attempts b
                  WHERE b.runtime_id = a.runtime_id AND b.invocation_uid = a.invocation_uid AND b.attempt_no < a.attempt_no
                    AND (b.commit_state = 'committed' OR b.probe_result = 'found'))`;

// Every stored status, so that (status, status_since) serves a range of status_since.
const STORED = invocationStatuses
  .filter((s) => s !== "stalled")
  .map((s) => `'${s}'`)
  .join(", ");

// Two committed invocations with one key: a duplicate effect may exist. It
// counts once per (runtime, key), when its second invocation committed, as an
// event of that invocation (its tool, its runtime): status_since of a
// committed invocation is when it committed (nothing changes its status
// afterwards but a conflict, which makes it unknown again). Hourly.
const possibleDuplicates = `
  SELECT c.id AS uid, c.runtime_id, c.tool, c.status_since AS at,
         'second committed invocation with key ' || c.idempotency_key AS detail, NULL::float8 AS seconds, c.idempotency_key AS ref
    FROM ${segments}
    -- OFFSET 0: read the range by (status, status_since), not by AND-ing in the index of every committed key.
    CROSS JOIN LATERAL (SELECT * FROM invocations c WHERE c.status IN (${STORED}) AND ${inSegment("c.status_since")} OFFSET 0) AS c
   WHERE c.commit_state = 'committed' AND c.idempotency_key IS NOT NULL AND ${filter("c")}
     AND (SELECT count(*) FROM invocations p
           WHERE p.runtime_id = c.runtime_id AND p.idempotency_key = c.idempotency_key AND p.commit_state = 'committed'
             AND (p.status_since < c.status_since OR (p.status_since = c.status_since AND p.id < c.id))) = 1`;

const escalations = `
  SELECT t.invocation_uid AS uid, t.runtime_id, t.tool, t.at, 'escalated from ' || coalesce(t.from_status, 'its first record') AS detail, NULL::float8 AS seconds
    FROM invocation_transitions t
   WHERE t.to_status = 'escalated' AND ${inRange("t.at")} AND ${filter("t")}`;

// Hourly: invocations by when they were first seen, with their transport attempts.
const retries = `
  SELECT i.id AS uid, i.runtime_id, i.tool, i.first_seen_at AS at, i.attempt_count || ' attempts' AS detail, greatest(i.attempt_count, 1)::float8 AS seconds
    FROM ${segments} JOIN invocations i ON ${inSegment("i.first_seen_at")}
   WHERE ${filter("i")}`;

// Waiting for approval: from entering awaiting_approval (the transition before) to approved or rejected.
const approvalWait = `
  SELECT t.invocation_uid AS uid, t.runtime_id, t.tool, t.at, t.to_status AS detail,
         extract(epoch FROM t.at - p.at)::float8 AS seconds
    FROM invocation_transitions t
    JOIN LATERAL (SELECT p.at FROM invocation_transitions p WHERE p.invocation_uid = t.invocation_uid AND p.id < t.id ORDER BY p.id DESC LIMIT 1) AS p ON true
   WHERE t.from_status = 'awaiting_approval' AND t.to_status IN ('approved', 'rejected') AND ${inRange("t.at")} AND ${filter("t")}`;

// The policy job (lib/invocations/apply-policies.ts) escalates what waited past its SLA as `system`, marked policy: sla.
const slaBreaches = `
  SELECT i.id AS uid, i.runtime_id, i.tool, a.at, a.note AS detail, NULL::float8 AS seconds
    FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid
   WHERE a.action = 'escalate' AND a.actor = 'system' AND a.payload ->> 'policy' = 'sla' AND ${inRange("a.at")} AND ${filter("i")}`;

// Duplicates the key could not catch (decision 028): refused at the guard as possible_duplicate, and flagged after
// the fact (invocations.possible_duplicate_of), by when they were first seen.
const duplicatesAtGuard = `
  SELECT NULL::uuid AS uid, g.runtime_id, g.tool, g.at, 'the guard refused a new key as a possible duplicate' AS detail,
         NULL::float8 AS seconds, g.invocation_id AS ref
    FROM guard_checks g
   WHERE NOT g.allow AND g.reason = 'possible_duplicate' AND ${inRange("g.at")} AND ${filter("g")}`;

const duplicatesAfter = `
  SELECT i.id AS uid, i.runtime_id, i.tool, i.first_seen_at AS at,
         'possible duplicate of ' || i.possible_duplicate_of || coalesce(' (' || i.duplicate_review || ')', '') AS detail,
         NULL::float8 AS seconds
    FROM invocations i
   WHERE i.possible_duplicate_of IS NOT NULL AND ${inRange("i.first_seen_at")} AND ${filter("i")}`;

// Settle's asks of a runtime's verifier (decision 027), by when the request was made: how it ended, how many
// asks it took (seconds: the asks), and how many of them a verifier answered (ref).
const verifications = `
  SELECT v.invocation_uid AS uid, v.runtime_id, i.tool, v.created_at AS at,
         v.state || ' after ' || v.tries || ' ask' || CASE WHEN v.tries = 1 THEN '' ELSE 's' END AS detail,
         v.tries::float8 AS seconds,
         (SELECT count(*) FROM jsonb_array_elements(v.answers) AS x WHERE x ->> 'via' <> 'settle')::text AS ref
    FROM verification_requests v JOIN invocations i ON i.id = v.invocation_uid
   WHERE ${inRange("v.created_at")} AND ${filter("i")}`;

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
  possible_duplicates_at_guard: duplicatesAtGuard,
  possible_duplicates_after: duplicatesAfter,
  verifications,
} as const;
export type SourceName = keyof typeof sources;

/** The sources metric_hours holds per hour: read raw over $9/$10 only. */
export const hourlySources = [
  "receiver_replays",
  "possible_duplicate_effects",
  "retries",
] as const satisfies readonly SourceName[];

/** UTC bucket ($7: 'hour' or 'day') of a timestamptz column. */
export const bucket = (col: string) => `date_trunc($7::text, ${col} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;

/** Events per tool and bucket; for unknown outcomes also per fate. */
export function countQuery(source: SourceName): string {
  const detail = source === "unknown_outcomes" ? "s.detail" : "NULL::text";
  return `${declare()}SELECT s.tool, ${bucket("s.at")} AS bucket, ${detail} AS kind, count(*)::int AS n, sum(s.seconds)::float8 AS total
            FROM (${sources[source]}) AS s GROUP BY 1, 2, 3`;
}

/** Every measured duration with its tool, for percentiles. */
export function durationsQuery(source: "pending_recovery" | "approval_wait"): string {
  return `${declare()}SELECT s.tool, s.seconds FROM (${sources[source]}) AS s WHERE s.seconds IS NOT NULL`;
}

/**
 * Queue size over time: all matching runtimes' samples summed per sampled
 * minute, then per bucket. Hourly buckets read every minute; daily ones every
 * tenth minute (a 30-day range reads 4,320 instants, not 43,200), by key.
 */
export const queueSeriesQuery = `${declare()}
  SELECT ${bucket("m")} AS bucket, max(q.total)::int AS max, avg(q.total)::float8 AS avg
    FROM generate_series(date_trunc('minute', $1::timestamptz), $2::timestamptz,
                         CASE $7::text WHEN 'hour' THEN interval '1 minute' ELSE interval '10 minutes' END) AS m
    JOIN LATERAL (SELECT sum(size) AS total FROM queue_samples
                   WHERE at = m AND ($4::uuid IS NULL OR runtime_id = $4::uuid)) AS q ON q.total IS NOT NULL
   WHERE ${inRange("m")}
   GROUP BY 1`;

/** Verifier asks per tool: requests, asks, answers, and how they ended. */
export const verificationTotalsQuery = `${declare()}
  SELECT s.tool, count(*)::int AS requests, coalesce(sum(s.seconds), 0)::int AS asks, coalesce(sum(s.ref::int), 0)::int AS answers,
         count(*) FILTER (WHERE s.detail LIKE 'settled %')::int AS settled, count(*) FILTER (WHERE s.detail LIKE 'gave_up %')::int AS gave_up
    FROM (${verifications}) AS s GROUP BY 1`;
