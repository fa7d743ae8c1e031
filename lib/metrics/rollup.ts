import type { Db } from "../db/client";
import type { Tx } from "../db/driver";
import { env } from "../env";
import { declare, episodeRows, filter, bucket, sources } from "./sql";

// Rollups of the trust metrics (decision 009). Three sources read many rows
// whatever the range: invocations first seen (retries per invocation),
// committed retries (receiver replays) and committed keyed invocations
// (possible duplicate effects). metric_hours keeps them per hour, runtime and
// tool; metric_episodes keeps each invocation's unknown-outcome episode.
// Both cover invocations first seen before metric_rollup_state.rolled_before
// (an hour boundary at least 15 minutes behind the database clock); the rest,
// the last hour or so, is read raw.
//
// A change to an invocation first seen more than 10 minutes ago is noted in
// metric_dirty by a trigger, in the changing transaction. A reader reads the
// hours and invocations it touches raw (so no number is ever stale), and the
// job recomputes them — whole hours, from the same SQL — and deletes the notes.

export const HOUR_MS = 3_600_000;
/** How far the job rolls up in one transaction, so a first run over a long history is cut in steps. */
const STEP_MS = 7 * 24 * HOUR_MS;
/** Notes the job handles per transaction. */
const DIRTY_BATCH = 2_000;
const LOCK = `pg_try_advisory_xact_lock(hashtext('settle_metric_rollups'))`;

export type Coverage = { rolledBefore: Date | null; staleUids: string[]; staleHours: number[] };
export type RangePlan = {
  segments: [string[], string[]];
  coveredFrom: string;
  coveredTo: string;
  staleHours: string[];
};

// The hours and invocations the notes touch: the hours the rollups may hold
// wrongly — the invocation's old and new first-seen hour, its committed
// retries, the commits of its key (old and new) and its old commit — and the
// invocations whose episodes may be wrong.
const touchedQuery = `
  WITH d AS (SELECT * FROM metric_dirty ORDER BY id LIMIT $1::int),
  state AS (SELECT rolled_before FROM metric_rollup_state WHERE id = 1),
  times AS (
    SELECT d.first_seen_at AS at FROM d
    UNION ALL SELECT d.committed_since FROM d WHERE d.committed_since IS NOT NULL
    UNION ALL SELECT i.first_seen_at FROM d JOIN invocations i ON i.id = d.uid
    UNION ALL SELECT a.at FROM d JOIN attempts a ON a.runtime_id = d.runtime_id AND a.invocation_uid = d.uid
               WHERE a.phase = 'outcome' AND a.commit_state = 'committed' AND a.attempt_no > 1
    UNION ALL SELECT m.status_since FROM d LEFT JOIN invocations i ON i.id = d.uid
                JOIN invocations m ON m.runtime_id = d.runtime_id AND m.idempotency_key IN (d.idempotency_key, i.idempotency_key)
               WHERE m.commit_state = 'committed' AND m.idempotency_key IS NOT NULL)
  SELECT (SELECT rolled_before FROM state) AS rolled_before,
         (SELECT coalesce(array_agg(d.id::text), '{}') FROM d) AS ids,
         (SELECT coalesce(array_agg(DISTINCT d.uid::text), '{}') FROM d) AS uids,
         (SELECT coalesce(array_agg(DISTINCT (extract(epoch FROM date_trunc('hour', t.at, 'UTC')) * 1000)::float8), '{}')
            FROM times t, state WHERE t.at < state.rolled_before) AS hours`;

type Touched = { rolled_before: string | null; ids: string[]; uids: string[]; hours: number[] };

/** What a reader must know: how far the rollups go, and what in them is stale. */
export async function selectCoverage(db: Db): Promise<Coverage> {
  const [row] = await db.driver.query<Touched>(touchedQuery, [1_000_000]);
  return {
    rolledBefore: row?.rolled_before ? new Date(row.rolled_before) : null,
    staleUids: row?.uids ?? [],
    staleHours: (row?.hours ?? []).map(Number),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Adjacent or overlapping [start, end) intervals joined, in order. */
function mergeIntervals(intervals: Array<[number, number]>): [string[], string[]] {
  const sorted = intervals.filter(([s, e]) => e > s).sort((x, y) => x[0] - y[0]);
  const merged: Array<[number, number]> = [];
  for (const [s, e] of sorted) {
    const last = merged.at(-1);
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  return [merged.map(([s]) => iso(s)), merged.map(([, e]) => iso(e))];
}

/**
 * Splits [from, to) for the hourly sources: whole hours before rolled_before
 * are read from metric_hours, except stale ones; the rest (the partial hours
 * at the ends, the last hour or so, stale hours) raw.
 */
export function planRange(from: Date, to: Date, cover: Coverage): RangePlan {
  const start = Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS;
  const rolled = cover.rolledBefore?.getTime() ?? Number.NEGATIVE_INFINITY;
  const end = Math.min(Math.floor(to.getTime() / HOUR_MS) * HOUR_MS, rolled);
  if (end <= start) {
    return {
      segments: mergeIntervals([[from.getTime(), to.getTime()]]),
      coveredFrom: iso(start),
      coveredTo: iso(start),
      staleHours: [],
    };
  }
  const stale = cover.staleHours.filter((h) => h >= start && h < end);
  return {
    segments: mergeIntervals([
      [from.getTime(), start],
      ...stale.map((h): [number, number] => [h, h + HOUR_MS]),
      [end, to.getTime()],
    ]),
    coveredFrom: iso(start),
    coveredTo: iso(end),
    staleHours: stale.map(iso),
  };
}

/** The hourly sources per tool and bucket over the covered hours ($12, $13) but the stale ones ($14). */
export const rollupQuery = `${declare()}
  SELECT h.tool, ${bucket("h.hour")} AS bucket, sum(h.invocations)::int AS invocations, sum(h.attempts)::float8 AS attempts,
         sum(h.receiver_replays)::int AS receiver_replays, sum(h.possible_duplicates)::int AS possible_duplicates
    FROM metric_hours h
   WHERE h.hour >= $12::timestamptz AND h.hour < $13::timestamptz AND NOT (h.hour = ANY($14::timestamptz[])) AND ${filter("h")}
   GROUP BY 1, 2`;

// The job's statements. They run the sources with no filter over the raw
// intervals $9/$10 (whole hours), and take the parameters of `declare`.
const insertHours = `${declare()}
  INSERT INTO metric_hours (hour, runtime_id, tool, invocations, attempts, receiver_replays, possible_duplicates)
  SELECT date_trunc('hour', x.at, 'UTC'), x.runtime_id, x.tool, sum(x.inv)::int, sum(x.att)::int, sum(x.rep)::int, sum(x.dup)::int
    FROM (SELECT r.at, r.runtime_id, r.tool, 1 AS inv, r.seconds AS att, 0 AS rep, 0 AS dup FROM (${sources.retries}) AS r
          UNION ALL SELECT rr.at, rr.runtime_id, rr.tool, 0, 0, 1, 0 FROM (${sources.receiver_replays}) AS rr
          UNION ALL SELECT d.at, d.runtime_id, d.tool, 0, 0, 0, 1 FROM (${sources.possible_duplicate_effects}) AS d) AS x
   GROUP BY 1, 2, 3`;

const upsertEpisodes = (selector: string) => `${declare(["$15::uuid[]", "$16::timestamptz", "$17::timestamptz"])}
  INSERT INTO metric_episodes (uid, runtime_id, tool, first_seen_at, entered_at, settled_at, settled_by, escalated_at)
  SELECT e.uid, e.runtime_id, e.tool, e.first_seen_at, e.entered_at, e.settled_at, e.settled_by, e.escalated_at FROM (${episodeRows(selector)}) AS e
  ON CONFLICT (runtime_id, uid) DO UPDATE SET runtime_id = excluded.runtime_id, tool = excluded.tool, first_seen_at = excluded.first_seen_at,
    entered_at = excluded.entered_at, settled_at = excluded.settled_at, settled_by = excluded.settled_by, escalated_at = excluded.escalated_at`;
const upsertStaleEpisodes = upsertEpisodes(
  `SELECT i.id, i.first_seen_at FROM invocations i WHERE i.id = ANY($15::uuid[]) AND i.first_seen_at < $8::timestamptz`,
);
const upsertNewEpisodes = upsertEpisodes(
  `SELECT i.id, i.first_seen_at FROM invocations i WHERE i.first_seen_at >= $16::timestamptz AND i.first_seen_at < $17::timestamptz`,
);

function jobParams(rolledBefore: Date, segments: [string[], string[]], extra: unknown[] = []): unknown[] {
  const now = new Date().toISOString();
  return [
    now,
    now,
    null,
    null,
    now,
    env().SETTLE_STALL_WINDOW_S,
    "hour",
    rolledBefore.toISOString(),
    ...segments,
    [],
    now,
    now,
    [],
    ...extra,
  ];
}

async function lockedTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T | null> {
  return db.driver.transaction(
    async (tx) => {
      const [lock] = await tx.query<{ locked: boolean }>(`SELECT ${LOCK} AS locked`);
      return lock?.locked ? fn(tx) : null;
    },
    { settings: ["jit = off"] },
  );
}

/** Recomputes what a batch of notes touches; false when there were none. */
async function refreshStale(db: Db): Promise<boolean> {
  const done = await lockedTransaction(db, async (tx) => {
    const [t] = await tx.query<Touched>(touchedQuery, [DIRTY_BATCH]);
    if (!t || t.ids.length === 0) return false;
    // Nothing rolled up yet: the first roll-up reads everything as it is then.
    if (t.rolled_before) {
      const rolled = new Date(t.rolled_before);
      const hours = t.hours.map(Number);
      if (hours.length > 0) {
        await tx.query(`DELETE FROM metric_hours WHERE hour = ANY($1::timestamptz[])`, [hours.map(iso)]);
        await tx.query(insertHours, jobParams(rolled, mergeIntervals(hours.map((h) => [h, h + HOUR_MS]))));
      }
      await tx.query(`DELETE FROM metric_episodes WHERE uid = ANY($1::uuid[])`, [t.uids]);
      await tx.query(upsertStaleEpisodes, jobParams(rolled, [[], []], [t.uids, null, null]));
    }
    await tx.query(`DELETE FROM metric_dirty WHERE id = ANY($1::bigint[])`, [t.ids]);
    return true;
  });
  return done === true;
}

/** Rolls up the next step of hours up to the target; true when more is left. */
async function advance(db: Db): Promise<boolean> {
  const more = await lockedTransaction(db, async (tx) => {
    const [s] = await tx.query<{ rolled_before: string | null; first: string | null; target: string }>(
      `SELECT (SELECT rolled_before FROM metric_rollup_state WHERE id = 1) AS rolled_before,
              (SELECT date_trunc('hour', min(first_seen_at), 'UTC') FROM invocations) AS first,
              date_trunc('hour', clock_timestamp() - interval '15 minutes', 'UTC') AS target`,
    );
    const target = new Date(s!.target).getTime();
    const start = s!.rolled_before
      ? new Date(s!.rolled_before).getTime()
      : Math.min(target, s!.first ? new Date(s!.first).getTime() : target);
    const end = Math.min(target, start + STEP_MS);
    if (end > start) {
      await tx.query(`DELETE FROM metric_hours WHERE hour >= $1::timestamptz AND hour < $2::timestamptz`, [
        iso(start),
        iso(end),
      ]);
      await tx.query(insertHours, jobParams(new Date(end), [[iso(start)], [iso(end)]]));
      await tx.query(upsertNewEpisodes, jobParams(new Date(end), [[], []], [[], iso(start), iso(end)]));
      // A catch-up over days changes the tables' shape before autovacuum notices; the readers' plans depend on it.
      if (end - start > 6 * HOUR_MS) await tx.query("ANALYZE metric_hours, metric_episodes");
    }
    if (end > start || !s!.rolled_before) {
      await tx.query(
        `INSERT INTO metric_rollup_state (id, rolled_before, refreshed_at) VALUES (1, $1::timestamptz, clock_timestamp())
         ON CONFLICT (id) DO UPDATE SET rolled_before = excluded.rolled_before, refreshed_at = excluded.refreshed_at`,
        [iso(Math.max(start, end))],
      );
    }
    return end < target;
  });
  return more === true;
}

export type RollupRun = { staleBatches: number; steps: number };

/**
 * One pass of the job: recompute what changed, then roll up new hours, until
 * done or `budgetMs` has passed (a first run over months of history goes on
 * at the next tick). Another instance holding the lock makes this one skip.
 */
export async function refreshMetricRollups(db: Db, budgetMs = 20_000): Promise<RollupRun> {
  const started = Date.now();
  const run: RollupRun = { staleBatches: 0, steps: 0 };
  while (Date.now() - started < budgetMs && (await refreshStale(db))) run.staleBatches += 1;
  while (Date.now() - started < budgetMs) {
    run.steps += 1;
    if (!(await advance(db))) break;
  }
  return run;
}
