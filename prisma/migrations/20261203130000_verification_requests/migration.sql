-- AlterTable
ALTER TABLE "tool_catalog_entries" ADD COLUMN     "verify" JSONB;

-- CreateTable
CREATE TABLE "verification_requests" (
    "runtime_id" UUID NOT NULL,
    "id" UUID NOT NULL,
    "invocation_uid" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "tries" INTEGER NOT NULL DEFAULT 0,
    "config" JSONB NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "leased_until" TIMESTAMPTZ(3),
    "leased_by" TEXT,
    "first_dispatched_at" TIMESTAMPTZ(3) NOT NULL,
    "answers" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "verification_requests_pkey" PRIMARY KEY ("runtime_id","id")
);

-- CreateIndex
CREATE UNIQUE INDEX "verification_requests_runtime_id_invocation_uid_attempt_key" ON "verification_requests"("runtime_id", "invocation_uid", "attempt");

-- CreateIndex
CREATE INDEX "verification_requests_runtime_id_state_due_at_idx" ON "verification_requests"("runtime_id", "state", "due_at");

-- AddForeignKey
ALTER TABLE "verification_requests" ADD CONSTRAINT "verification_requests_runtime_id_fkey" FOREIGN KEY ("runtime_id") REFERENCES "runtimes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "verification_requests" ADD CONSTRAINT "verification_requests_invocation_uid_fkey" FOREIGN KEY ("invocation_uid") REFERENCES "invocations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
