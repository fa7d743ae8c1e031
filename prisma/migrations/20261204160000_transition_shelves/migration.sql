-- Transitions are partitioned by month as attempts are (migration *_attempt_shelves, decision 035): they grow
-- with traffic (two or three per invocation), so the audit trail's retention retires a month of them by detaching
-- and dropping its partition instead of deleting rows. `shelf` is the first day (UTC) of the month the row was
-- recorded in. Rows that must outlive their month (their invocation is not closed, in conflict, inside its audit
-- period, or the row is not yet fanned out to webhooks) move to the `infinity` shelf, `invocation_transitions_kept`.
-- `id` stays unique across partitions by its sequence; the key adds the shelf because a partitioned table's key
-- must hold its partition column.
ALTER TABLE "invocation_transitions" RENAME TO "invocation_transitions_unpartitioned";
ALTER TABLE "invocation_transitions_unpartitioned" RENAME CONSTRAINT "invocation_transitions_pkey" TO "invocation_transitions_unpartitioned_pkey";
DROP INDEX "invocation_transitions_decided_at_idx";
DROP INDEX "invocation_transitions_invocation_uid_id_idx";
DROP INDEX "invocation_transitions_not_fanned_out_idx";
DROP INDEX "invocation_transitions_unknown_entry_idx";
-- The id sequence belongs to the old table's column; it must outlive that table.
ALTER SEQUENCE "invocation_transitions_id_seq" OWNED BY NONE;

CREATE TABLE "invocation_transitions" (
  LIKE "invocation_transitions_unpartitioned" INCLUDING DEFAULTS,
  "shelf" DATE NOT NULL DEFAULT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date
) PARTITION BY RANGE ("shelf");
ALTER SEQUENCE "invocation_transitions_id_seq" OWNED BY "invocation_transitions"."id";
ALTER TABLE "invocation_transitions" ADD CONSTRAINT "invocation_transitions_pkey" PRIMARY KEY ("runtime_id", "id", "shelf");
CREATE INDEX "invocation_transitions_invocation_uid_id_idx" ON "invocation_transitions"("invocation_uid", "id");
-- The indexes of migrations *_trust_metrics_entry and *_write_path, as they were.
CREATE INDEX "invocation_transitions_unknown_entry_idx" ON "invocation_transitions" ("invocation_uid", "id")
  INCLUDE ("at", "tool", "runtime_id", "from_status", "to_status")
  WHERE ("to_status" IN ('outcome_unknown', 'partially_applied')
    OR ("to_status" = 'escalated' AND "commit_state" = 'unknown')
    OR (("from_status" IS NULL OR "from_status" = 'pending') AND "to_status" IN ('verifying', 'reconciled')));
CREATE INDEX "invocation_transitions_decided_at_idx" ON "invocation_transitions" ("to_status", "at")
  INCLUDE ("invocation_uid", "tool", "runtime_id", "commit_state", "resolution_by", "from_status")
  WHERE "to_status" IN ('reconciled', 'escalated', 'approved', 'rejected');
CREATE INDEX "invocation_transitions_not_fanned_out_idx" ON "invocation_transitions" ("id") WHERE NOT "fanned_out";

CREATE TABLE "invocation_transitions_default" PARTITION OF "invocation_transitions" DEFAULT;
CREATE TABLE "invocation_transitions_kept" PARTITION OF "invocation_transitions" FOR VALUES FROM ('infinity') TO (MAXVALUE);

-- A partition for every month that has transitions, and for this one.
DO $$
DECLARE m date;
BEGIN
  FOR m IN SELECT DISTINCT (date_trunc('month', recorded_at AT TIME ZONE 'UTC'))::date FROM "invocation_transitions_unpartitioned"
           UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "invocation_transitions" FOR VALUES FROM (%L) TO (%L)',
                   'invocation_transitions_p' || to_char(m, 'YYYY_MM'), m, (m + interval '1 month')::date);
  END LOOP;
END $$;

INSERT INTO "invocation_transitions"
  SELECT *, (date_trunc('month', recorded_at AT TIME ZONE 'UTC'))::date FROM "invocation_transitions_unpartitioned";
DROP TABLE "invocation_transitions_unpartitioned";
