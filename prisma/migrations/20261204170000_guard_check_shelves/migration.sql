-- The guard's answers are partitioned by month as attempts and transitions are (decision 035): one row per
-- guarded call, so they grow with traffic, and the audit trail's retention retires a month of them by detaching
-- and dropping its partition. `shelf` is the first day (UTC) of the month the answer was given in (existing rows:
-- of their `at`). Answers whose invocation must keep its history move to `guard_checks_kept`.
ALTER TABLE "guard_checks" RENAME TO "guard_checks_unpartitioned";
ALTER TABLE "guard_checks_unpartitioned" RENAME CONSTRAINT "guard_checks_pkey" TO "guard_checks_unpartitioned_pkey";
DROP INDEX "guard_checks_at_idx";
DROP INDEX "guard_checks_runtime_id_idempotency_key_idx";
DROP INDEX "guard_checks_denied_at_idx";
DROP INDEX "guard_checks_possible_duplicate_idx";

CREATE TABLE "guard_checks" (
  LIKE "guard_checks_unpartitioned" INCLUDING DEFAULTS,
  "shelf" DATE NOT NULL DEFAULT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date
) PARTITION BY RANGE ("shelf");
ALTER TABLE "guard_checks" ADD CONSTRAINT "guard_checks_pkey" PRIMARY KEY ("runtime_id", "id", "shelf");
CREATE INDEX "guard_checks_at_idx" ON "guard_checks"("at");
CREATE INDEX "guard_checks_runtime_id_idempotency_key_idx" ON "guard_checks"("runtime_id", "idempotency_key");
-- The indexes of migrations *_trust_metrics and *_possible_duplicates, as they were.
CREATE INDEX "guard_checks_denied_at_idx" ON "guard_checks" ("at") INCLUDE ("tool", "runtime_id") WHERE NOT "allow";
CREATE INDEX "guard_checks_possible_duplicate_idx" ON "guard_checks" ("runtime_id", "invocation_id", "at")
  WHERE "reason" = 'possible_duplicate';

CREATE TABLE "guard_checks_default" PARTITION OF "guard_checks" DEFAULT;
CREATE TABLE "guard_checks_kept" PARTITION OF "guard_checks" FOR VALUES FROM ('infinity') TO (MAXVALUE);

-- A partition for every month that has answers, and for this one.
DO $$
DECLARE m date;
BEGIN
  FOR m IN SELECT DISTINCT (date_trunc('month', at AT TIME ZONE 'UTC'))::date FROM "guard_checks_unpartitioned"
           UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "guard_checks" FOR VALUES FROM (%L) TO (%L)',
                   'guard_checks_p' || to_char(m, 'YYYY_MM'), m, (m + interval '1 month')::date);
  END LOOP;
END $$;

INSERT INTO "guard_checks" SELECT *, (date_trunc('month', at AT TIME ZONE 'UTC'))::date FROM "guard_checks_unpartitioned";
DROP TABLE "guard_checks_unpartitioned";
