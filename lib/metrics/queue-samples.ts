import type { Db } from "../db/client";
import { queueStatuses, stalledSql } from "../outcome/status";

// Queue size over time (trust metrics): once per minute, how many invocations
// of each runtime need a person (docs/outcome-model.md §4 "in the queue", stalled computed at
// `now`). One row per runtime per minute, zero included, so a chart shows an
// empty queue as 0 rather than a gap. Every instance runs this job; the
// minute's rows are keyed (at, runtime_id), so the first instance to write a
// minute wins and the others write nothing.

const stored = queueStatuses.filter((s) => s !== "stalled");

export async function sampleQueue(db: Db, now: Date): Promise<number> {
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000).toISOString();
  const taken = await db.driver.query(`SELECT 1 FROM queue_samples WHERE at = $1::timestamptz LIMIT 1`, [minute]);
  if (taken.length > 0) return 0;
  const inserted = await db.driver.query(
    `INSERT INTO queue_samples (at, runtime_id, size)
     SELECT $1::timestamptz, r.id, coalesce(q.size, 0)
       FROM runtimes r
       LEFT JOIN (SELECT runtime_id, count(*)::int AS size FROM invocations
                   WHERE status = ANY($2::text[]) OR ${stalledSql("", "$3::timestamptz")}
                   GROUP BY runtime_id) AS q ON q.runtime_id = r.id
     ON CONFLICT (runtime_id, at) DO NOTHING
     RETURNING 1`,
    [minute, stored, now.toISOString()],
  );
  return inserted.length;
}
