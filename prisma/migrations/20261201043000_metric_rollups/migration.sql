-- CreateTable
CREATE TABLE "metric_hours" (
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "runtime_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "invocations" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "receiver_replays" INTEGER NOT NULL DEFAULT 0,
    "possible_duplicates" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "metric_hours_pkey" PRIMARY KEY ("hour","runtime_id","tool")
);

-- CreateTable
CREATE TABLE "metric_episodes" (
    "uid" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "entered_at" TIMESTAMPTZ(3) NOT NULL,
    "settled_at" TIMESTAMPTZ(3),
    "settled_by" TEXT,
    "escalated_at" TIMESTAMPTZ(3),

    CONSTRAINT "metric_episodes_pkey" PRIMARY KEY ("uid")
);

-- CreateTable
CREATE TABLE "metric_dirty" (
    "id" BIGSERIAL NOT NULL,
    "uid" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "committed_since" TIMESTAMPTZ(3),
    "idempotency_key" TEXT,

    CONSTRAINT "metric_dirty_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "metric_rollup_state" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "rolled_before" TIMESTAMPTZ(3) NOT NULL,
    "refreshed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "metric_rollup_state_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "metric_episodes_entered_at_idx" ON "metric_episodes"("entered_at");

-- CreateIndex
CREATE INDEX "metric_episodes_settled_at_idx" ON "metric_episodes"("settled_at");

-- Trust-metric rollups (lib/domain/metrics-rollup.ts) count invocations first
-- seen before metric_rollup_state.rolled_before, which the job keeps at least
-- 15 minutes behind the clock. A change to an invocation first seen more than
-- 10 minutes ago may alter an hour or an episode already rolled up: this
-- trigger notes it, in the same transaction, with the values the row had
-- before (its old hour, its old commit, its old key). Readers compute what a
-- noted invocation touches from raw rows; the job recomputes it and deletes the
-- note. Newer invocations (nearly all ingest) pass the WHEN test and write
-- nothing. The 5 minutes between the two bounds cover the time from an UPDATE
-- to its COMMIT. Settle never deletes invocations.
CREATE FUNCTION settle_mark_metrics_dirty() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO metric_dirty (uid, runtime_id, first_seen_at, committed_since, idempotency_key)
  VALUES (OLD.id, OLD.runtime_id, OLD.first_seen_at,
          CASE WHEN OLD.commit_state = 'committed' THEN OLD.status_since END, OLD.idempotency_key);
  RETURN NULL;
END
$$;

CREATE TRIGGER invocations_mark_metrics_dirty
  AFTER UPDATE ON invocations
  FOR EACH ROW
  WHEN (least(OLD.first_seen_at, NEW.first_seen_at) < clock_timestamp() - interval '10 minutes'
        AND (OLD.version, OLD.first_seen_at, OLD.attempt_count, OLD.status, OLD.commit_state, OLD.status_since, OLD.idempotency_key, OLD.tool)
            IS DISTINCT FROM (NEW.version, NEW.first_seen_at, NEW.attempt_count, NEW.status, NEW.commit_state, NEW.status_since, NEW.idempotency_key, NEW.tool))
  EXECUTE FUNCTION settle_mark_metrics_dirty();
