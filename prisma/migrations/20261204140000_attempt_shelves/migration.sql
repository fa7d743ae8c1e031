-- Attempts are partitioned by month (docs/decisions/035-time-partitions-and-retention.md): `shelf` is the first
-- day (UTC) of the month the record was received in, so retention retires a whole month by detaching and dropping
-- its partition instead of deleting rows. Rows that must outlive their month (their invocation is not settled,
-- in conflict, or still inside its retention) move to the `infinity` shelf, `attempts_kept`. A month without its
-- partition yet lands in `attempts_default`; Settle's retention job makes months ahead and moves such rows out
-- (lib/retention/partitions.ts). The event key stays unique per month by the primary key; across months the write
-- path's read finds an earlier copy before it writes.
ALTER TABLE "attempts" RENAME TO "attempts_unpartitioned";
ALTER TABLE "attempts_unpartitioned" RENAME CONSTRAINT "attempts_pkey" TO "attempts_unpartitioned_pkey";
ALTER INDEX "attempts_runtime_id_invocation_uid_attempt_no_idx" RENAME TO "attempts_unpartitioned_lookup_idx";

CREATE TABLE "attempts" (
  LIKE "attempts_unpartitioned" INCLUDING DEFAULTS,
  "shelf" DATE NOT NULL DEFAULT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date
) PARTITION BY RANGE ("shelf");
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_pkey" PRIMARY KEY ("runtime_id", "event_key", "shelf");
CREATE INDEX "attempts_runtime_id_invocation_uid_attempt_no_idx" ON "attempts"("runtime_id", "invocation_uid", "attempt_no");

CREATE TABLE "attempts_default" PARTITION OF "attempts" DEFAULT;
CREATE TABLE "attempts_kept" PARTITION OF "attempts" FOR VALUES FROM ('infinity') TO (MAXVALUE);

-- A partition for every month that has records, and for this one.
DO $$
DECLARE m date;
BEGIN
  FOR m IN SELECT DISTINCT (date_trunc('month', received_at AT TIME ZONE 'UTC'))::date FROM "attempts_unpartitioned"
           UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "attempts" FOR VALUES FROM (%L) TO (%L)',
                   'attempts_p' || to_char(m, 'YYYY_MM'), m, (m + interval '1 month')::date);
  END LOOP;
END $$;

INSERT INTO "attempts" SELECT *, (date_trunc('month', received_at AT TIME ZONE 'UTC'))::date FROM "attempts_unpartitioned";
DROP TABLE "attempts_unpartitioned";

-- Retention as data (lib/retention/settings.ts): the `*` row is the default, a runtime's own row (scope = its id)
-- overrides it. A small reference table, like the policies.
CREATE TABLE "retention_settings" (
  "scope" TEXT NOT NULL,
  "attempts_days" INTEGER NOT NULL,
  "audit_days" INTEGER NOT NULL,
  "updated_at" TIMESTAMPTZ(3) NOT NULL,
  "updated_by" TEXT NOT NULL,
  CONSTRAINT "retention_settings_pkey" PRIMARY KEY ("scope")
);

-- Every archive Settle wrote before it dropped or deleted rows, and how far it got: a retirement that stopped
-- part-way resumes from here (lib/retention/retire.ts).
CREATE TABLE "retention_archives" (
  "name" TEXT NOT NULL,
  "source" TEXT NOT NULL,
  "shelf" DATE,
  "phase" TEXT NOT NULL,
  "file" TEXT,
  "rows" BIGINT,
  "bytes" BIGINT,
  "sha256" TEXT,
  "started_at" TIMESTAMPTZ(3) NOT NULL,
  "finished_at" TIMESTAMPTZ(3),
  CONSTRAINT "retention_archives_pkey" PRIMARY KEY ("name")
);
