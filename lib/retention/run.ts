import type { Db } from "../db/client";
import { env } from "../env";
import { processWide } from "../process-wide";
import { applyRetention, type RetentionRun } from "./retire";

// The retention job's pace: partitions are made months ahead, and a month leaves at the earliest days after
// it ended, so a run every quarter of an hour is plenty; the job's timer ticks every few seconds.
export const RETENTION_EVERY_MS = 15 * 60_000;
/** The audit trail's sweep reads the old end of its tables: once a day is enough for periods counted in days. */
export const AUDIT_SWEEP_EVERY_MS = 24 * 3_600_000;

const last = processWide("retentionLastRun", () => ({ at: 0, audit: 0 }));

/** Retention as the background job runs it: at most once per RETENTION_EVERY_MS in this process. */
export async function runRetentionJob(db: Db, now: Date): Promise<RetentionRun | null> {
  if (now.getTime() - last.at < RETENTION_EVERY_MS) return null;
  last.at = now.getTime();
  const audit = now.getTime() - last.audit >= AUDIT_SWEEP_EVERY_MS;
  if (audit) last.audit = now.getTime();
  return applyRetention(db, now, env().SETTLE_ARCHIVE_DIR, { audit });
}
