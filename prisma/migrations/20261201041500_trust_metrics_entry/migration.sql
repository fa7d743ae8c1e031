-- An unknown outcome can also begin in the batch that settles it: the unknown
-- outcome and its probe arrive together, so the first stored state is already
-- `reconciled` (from no state). The entry index (migration trust_metrics)
-- follows metrics-sql.ts UNKNOWN_ENTRY, which now includes that case.
DROP INDEX "invocation_transitions_unknown_entry_idx";
CREATE INDEX "invocation_transitions_unknown_entry_idx" ON "invocation_transitions" ("invocation_uid", "id")
  INCLUDE ("at", "tool", "runtime_id", "from_status", "to_status")
  WHERE ("to_status" IN ('outcome_unknown', 'partially_applied')
    OR ("to_status" = 'escalated' AND "commit_state" = 'unknown')
    OR (("from_status" IS NULL OR "from_status" = 'pending') AND "to_status" IN ('verifying', 'reconciled')));
