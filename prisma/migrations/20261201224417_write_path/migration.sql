/*
  Warnings:

  - The primary key for the `attempts` table will be changed. If it partially fails, the table could be left without primary key constraint.
  - You are about to drop the column `id` on the `attempts` table. All the data in the column will be lost.

*/
-- DropForeignKey
ALTER TABLE "attempts" DROP CONSTRAINT "attempts_invocation_uid_fkey";

-- DropForeignKey
ALTER TABLE "invocation_search" DROP CONSTRAINT "invocation_search_invocation_uid_fkey";

-- DropIndex
DROP INDEX "attempts_invocation_uid_attempt_no_idx";

-- DropIndex
DROP INDEX "attempts_received_at_idx";

-- DropIndex
DROP INDEX "attempts_runtime_id_event_key_key";

-- DropIndex
DROP INDEX "invocation_transitions_at_idx";

-- DropIndex
DROP INDEX "invocation_transitions_fanned_out_id_idx";

-- DropIndex
DROP INDEX "invocations_idempotency_key_idx";

-- DropIndex
DROP INDEX "invocations_last_attempt_at_idx";

-- DropIndex
DROP INDEX "invocations_status_stall_at_idx";

-- DropIndex
DROP INDEX "tasks_last_seen_at_idx";

-- AlterTable
ALTER TABLE "attempts" DROP CONSTRAINT "attempts_pkey",
DROP COLUMN "id",
ADD COLUMN     "ignored" JSONB,
ADD CONSTRAINT "attempts_pkey" PRIMARY KEY ("runtime_id", "event_key");

-- AlterTable
ALTER TABLE "invocations" ADD COLUMN     "fold" JSONB;

-- CreateIndex
CREATE INDEX "attempts_runtime_id_invocation_uid_attempt_no_idx" ON "attempts"("runtime_id", "invocation_uid", "attempt_no");

-- CreateIndex
CREATE INDEX "invocations_runtime_id_idempotency_key_idx" ON "invocations"("runtime_id", "idempotency_key");

-- The write path (lib/domain/invocation-store.ts, decision 012) writes the
-- status-change log, the search row and the metrics notes from its own
-- set-based statement, for every writer (ingest, guard, operator actions,
-- jobs). The per-row triggers that did it are gone: they cost ingest more
-- than the rows they wrote, and fired twice per new invocation.
DROP TRIGGER "invocations_record_transition" ON "invocations";
DROP FUNCTION settle_record_transition();
DROP TRIGGER "invocations_search_insert" ON "invocations";
DROP TRIGGER "invocations_search_update" ON "invocations";
DROP FUNCTION settle_invocation_search();
DROP TRIGGER "invocations_mark_metrics_dirty" ON "invocations";
DROP FUNCTION settle_mark_metrics_dirty();

-- Made redundant: committed invocations by key are found through
-- (runtime_id, idempotency_key), a handful of rows per key; committed attempts
-- of an invocation through (runtime_id, invocation_uid, attempt_no).
DROP INDEX "invocations_committed_key_idx";
DROP INDEX "attempts_committed_idx";

-- Transitions the webhook fan-out has not read yet: a partial index, as small as the backlog.
CREATE INDEX "invocation_transitions_not_fanned_out_idx" ON "invocation_transitions" ("id") WHERE NOT "fanned_out";

-- The write path's one statement checks, after writing, that nothing it
-- folded from changed underneath it (a concurrent writer bumped a version,
-- created an invocation it thought new, stored one of its records first).
-- If so it raises this, the statement rolls back whole, and the writer reads
-- again and retries: serialization_failure, as PostgreSQL itself would say.
CREATE FUNCTION settle_write_conflict(detail text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a concurrent write changed what this one was folded from (%)', detail USING ERRCODE = 'serialization_failure';
END
$$;

-- Stalls are found among pending invocations only (the policy job, the queue
-- sampler, trust metrics): a partial index holds just the in-flight ones, so
-- the write that settles an invocation leaves it.
CREATE INDEX "invocations_pending_stall_at_idx" ON "invocations" ("stall_at") WHERE "status" = 'pending';
