-- Every primary and unique key of a table that holds a runtime's data leads with runtime_id, and foreign keys
-- between them stay inside one runtime (decision 036): what Citus requires of a table distributed by runtime.
-- invocation_actions and invocation_search gain runtime_id, filled from their invocation. The single-column
-- indexes beside the new keys serve the readers that still name a row by its id alone.
-- DropForeignKey
ALTER TABLE "invocation_actions" DROP CONSTRAINT "invocation_actions_invocation_uid_fkey";

-- DropForeignKey
ALTER TABLE "verification_requests" DROP CONSTRAINT "verification_requests_invocation_uid_fkey";

-- AlterTable
ALTER TABLE "guard_checks" DROP CONSTRAINT "guard_checks_pkey",
ADD CONSTRAINT "guard_checks_pkey" PRIMARY KEY ("runtime_id", "id");

-- AlterTable
ALTER TABLE "invocation_actions" ADD COLUMN "runtime_id" UUID;
UPDATE "invocation_actions" a SET "runtime_id" = i."runtime_id" FROM "invocations" i WHERE i."id" = a."invocation_uid";
ALTER TABLE "invocation_actions" DROP CONSTRAINT "invocation_actions_pkey",
ALTER COLUMN "runtime_id" SET NOT NULL,
ADD CONSTRAINT "invocation_actions_pkey" PRIMARY KEY ("runtime_id", "id");

-- AlterTable
ALTER TABLE "invocation_search" ADD COLUMN "runtime_id" UUID;
UPDATE "invocation_search" s SET "runtime_id" = i."runtime_id" FROM "invocations" i WHERE i."id" = s."invocation_uid";
DELETE FROM "invocation_search" WHERE "runtime_id" IS NULL;
ALTER TABLE "invocation_search" DROP CONSTRAINT "invocation_search_pkey",
ALTER COLUMN "runtime_id" SET NOT NULL,
ADD CONSTRAINT "invocation_search_pkey" PRIMARY KEY ("runtime_id", "invocation_uid");

-- AlterTable
ALTER TABLE "invocation_transitions" DROP CONSTRAINT "invocation_transitions_pkey",
ADD CONSTRAINT "invocation_transitions_pkey" PRIMARY KEY ("runtime_id", "id");

-- AlterTable
ALTER TABLE "invocations" DROP CONSTRAINT "invocations_pkey",
ADD CONSTRAINT "invocations_pkey" PRIMARY KEY ("runtime_id", "id");

-- AlterTable
ALTER TABLE "metric_dirty" DROP CONSTRAINT "metric_dirty_pkey",
ADD CONSTRAINT "metric_dirty_pkey" PRIMARY KEY ("runtime_id", "id");

-- AlterTable
ALTER TABLE "metric_episodes" DROP CONSTRAINT "metric_episodes_pkey",
ADD CONSTRAINT "metric_episodes_pkey" PRIMARY KEY ("runtime_id", "uid");

-- AlterTable
ALTER TABLE "metric_hours" DROP CONSTRAINT "metric_hours_pkey",
ADD CONSTRAINT "metric_hours_pkey" PRIMARY KEY ("runtime_id", "hour", "tool");

-- AlterTable
ALTER TABLE "queue_samples" DROP CONSTRAINT "queue_samples_pkey",
ADD CONSTRAINT "queue_samples_pkey" PRIMARY KEY ("runtime_id", "at");

-- CreateIndex
CREATE INDEX "invocations_id_idx" ON "invocations"("id");

-- CreateIndex
CREATE INDEX "metric_dirty_id_idx" ON "metric_dirty"("id");

-- CreateIndex
CREATE INDEX "metric_episodes_uid_idx" ON "metric_episodes"("uid");

-- CreateIndex
CREATE INDEX "metric_hours_hour_idx" ON "metric_hours"("hour");

-- CreateIndex
CREATE INDEX "queue_samples_at_idx" ON "queue_samples"("at");

-- AddForeignKey
ALTER TABLE "invocation_actions" ADD CONSTRAINT "invocation_actions_runtime_id_invocation_uid_fkey" FOREIGN KEY ("runtime_id", "invocation_uid") REFERENCES "invocations"("runtime_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "verification_requests" ADD CONSTRAINT "verification_requests_runtime_id_invocation_uid_fkey" FOREIGN KEY ("runtime_id", "invocation_uid") REFERENCES "invocations"("runtime_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
