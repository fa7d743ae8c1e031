import type { Db } from "../db/client";
import { archiveBatch } from "./batches";
import { cutoffsFor, expiredParams, expiredSql, shortestDays } from "./rules";
import type { RetentionSet } from "./settings";

// The audit trail's retention (audit_days): an invocation's actions and transitions go once it has been closed
// that long (rules.ts; an open one keeps them however old), admin actions and policy changes once they are
// that old by the default period. Each leaves through the archive, in batches (batches.ts).

export async function sweepAudit(db: Db, dir: string, settings: RetentionSet, now: Date): Promise<number> {
  const cutoffs = cutoffsFor(settings, "audit_days", now);
  // No row newer than the shortest period can go: the bound keeps each pass to the old rows (actions by their
  // index on `at`).
  const oldest = new Date(now.getTime() - shortestDays(settings, "audit_days") * 86_400_000).toISOString();
  const ofExpired = (alias: string) =>
    `${alias}.at < $4::timestamptz AND EXISTS (SELECT 1 FROM invocations i
       WHERE i.runtime_id = ${alias}.runtime_id AND i.id = ${alias}.invocation_uid AND ${expiredSql("i", 1)})`;
  let archived = 0;
  archived += await archiveBatch(db, dir, now, {
    table: "invocation_actions",
    from: "invocation_actions",
    where: ofExpired("t"),
    params: [...expiredParams(cutoffs), oldest],
  });
  archived += await archiveBatch(db, dir, now, {
    table: "invocation_transitions",
    from: "invocation_transitions",
    where: `${ofExpired("t")} AND t.fanned_out`,
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
