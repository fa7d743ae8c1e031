import type { Db } from "../db/client";
import { archiveBatch } from "./batches";
import { cutoffsFor, expiredParams, rowMayGoSql, shortestDays } from "./rules";
import type { RetentionSet } from "./settings";

// The audit trail's retention (audit_days) for what is not partitioned by month: an invocation's actions go
// once it has been closed that long (rules.ts; an open one keeps them however old), admin actions and policy
// changes once they are that old by the default period. Each leaves through the archive, in batches
// (batches.ts). Transitions follow the same period but leave a month at a time, as attempts do (retire.ts).

export async function sweepAudit(db: Db, dir: string, settings: RetentionSet, now: Date): Promise<number> {
  const cutoffs = cutoffsFor(settings, "audit_days", now);
  // No row newer than the shortest period can go: the bound keeps each pass to the old rows.
  const oldest = new Date(now.getTime() - shortestDays(settings, "audit_days") * 86_400_000).toISOString();
  let archived = await archiveBatch(db, dir, now, {
    table: "invocation_actions",
    from: "invocation_actions",
    where: `t.at < $4::timestamptz AND ${rowMayGoSql("invocation_actions", "t", 1)}`,
    params: [...expiredParams(cutoffs), oldest],
  });
  for (const table of ["admin_actions", "policy_changes"] as const) {
    archived += await archiveBatch(db, dir, now, {
      table,
      from: table,
      where: `t.at < $1::timestamptz`,
      params: [cutoffs.fallback],
    });
  }
  return archived;
}
