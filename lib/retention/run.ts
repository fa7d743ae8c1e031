import type { Db } from "../db/client";
import { env } from "../env";
import { processWide } from "../process-wide";
import { applyRetention, type RetentionRun } from "./retire";

// The retention job's pace: partitions are made months ahead, and a month leaves at the earliest days after
// it ended, so a run every quarter of an hour is plenty; the job's timer ticks every few seconds.
export const RETENTION_EVERY_MS = 15 * 60_000;

const last = processWide("retentionLastRun", () => ({ at: 0 }));

/** Retention as the background job runs it: at most once per RETENTION_EVERY_MS in this process. */
export async function runRetentionJob(db: Db, now: Date): Promise<RetentionRun | null> {
  if (now.getTime() - last.at < RETENTION_EVERY_MS) return null;
  last.at = now.getTime();
  return applyRetention(db, now, env().SETTLE_ARCHIVE_DIR);
}
