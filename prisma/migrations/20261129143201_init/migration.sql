-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "runtimes" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "runtimes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runtime_keys" (
    "id" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "runtime_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tasks" (
    "runtime_id" UUID NOT NULL,
    "task_id" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("runtime_id","task_id")
);

-- CreateTable
CREATE TABLE "invocations" (
    "id" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "effect_class" TEXT,
    "idempotency_key" TEXT,
    "status" TEXT NOT NULL,
    "commit_state" TEXT NOT NULL,
    "next_action" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "conflict" BOOLEAN NOT NULL DEFAULT false,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "status_since" TIMESTAMPTZ(3) NOT NULL,
    "stall_at" TIMESTAMPTZ(3),
    "not_before" TIMESTAMPTZ(3),
    "assignee" TEXT,
    "user_message" TEXT,
    "last_code" TEXT,
    "resolution" JSONB,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invocations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attempts" (
    "id" UUID NOT NULL,
    "invocation_uid" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "event_key" TEXT NOT NULL,
    "event_id" TEXT,
    "seq" INTEGER NOT NULL,
    "attempt_id" TEXT,
    "attempt_no" INTEGER,
    "phase" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "tool" TEXT NOT NULL,
    "effect_class" TEXT,
    "idempotency_key" TEXT,
    "budget_left_s" INTEGER,
    "args_digest" TEXT,
    "dialect" TEXT NOT NULL,
    "wrapper_dialect" TEXT,
    "outcome" TEXT NOT NULL,
    "commit_state" TEXT NOT NULL,
    "code" TEXT,
    "category" TEXT,
    "retry_directive" TEXT NOT NULL,
    "not_before" TIMESTAMPTZ(3),
    "max_attempts_remaining" INTEGER,
    "next_action" TEXT NOT NULL,
    "dispatch_stage" TEXT,
    "probe_result" TEXT,
    "safe_details" JSONB NOT NULL DEFAULT '{}',
    "agent_message" TEXT,
    "user_message" TEXT,
    "items" JSONB NOT NULL DEFAULT '[]',
    "envelope" JSONB,

    CONSTRAINT "attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invocation_actions" (
    "id" UUID NOT NULL,
    "invocation_uid" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "action" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "from_status" TEXT NOT NULL,
    "to_status" TEXT NOT NULL,
    "note" TEXT,
    "payload" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "invocation_actions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "runtimes_name_key" ON "runtimes"("name");

-- CreateIndex
CREATE UNIQUE INDEX "runtime_keys_prefix_key" ON "runtime_keys"("prefix");

-- CreateIndex
CREATE UNIQUE INDEX "runtime_keys_hash_key" ON "runtime_keys"("hash");

-- CreateIndex
CREATE INDEX "runtime_keys_runtime_id_idx" ON "runtime_keys"("runtime_id");

-- CreateIndex
CREATE INDEX "tasks_last_seen_at_idx" ON "tasks"("last_seen_at");

-- CreateIndex
CREATE INDEX "invocations_status_status_since_idx" ON "invocations"("status", "status_since");

-- CreateIndex
CREATE INDEX "invocations_status_stall_at_idx" ON "invocations"("status", "stall_at");

-- CreateIndex
CREATE INDEX "invocations_runtime_id_task_id_idx" ON "invocations"("runtime_id", "task_id");

-- CreateIndex
CREATE INDEX "invocations_idempotency_key_idx" ON "invocations"("idempotency_key");

-- CreateIndex
CREATE INDEX "invocations_runtime_id_last_attempt_at_idx" ON "invocations"("runtime_id", "last_attempt_at");

-- CreateIndex
CREATE INDEX "invocations_last_attempt_at_idx" ON "invocations"("last_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "invocations_runtime_id_invocation_id_key" ON "invocations"("runtime_id", "invocation_id");

-- CreateIndex
CREATE INDEX "attempts_invocation_uid_attempt_no_idx" ON "attempts"("invocation_uid", "attempt_no");

-- CreateIndex
CREATE INDEX "attempts_received_at_idx" ON "attempts"("received_at");

-- CreateIndex
CREATE UNIQUE INDEX "attempts_runtime_id_event_key_key" ON "attempts"("runtime_id", "event_key");

-- CreateIndex
CREATE INDEX "invocation_actions_invocation_uid_seq_idx" ON "invocation_actions"("invocation_uid", "seq");

-- CreateIndex
CREATE INDEX "invocation_actions_at_idx" ON "invocation_actions"("at");

-- AddForeignKey
ALTER TABLE "runtime_keys" ADD CONSTRAINT "runtime_keys_runtime_id_fkey" FOREIGN KEY ("runtime_id") REFERENCES "runtimes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_runtime_id_fkey" FOREIGN KEY ("runtime_id") REFERENCES "runtimes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invocations" ADD CONSTRAINT "invocations_runtime_id_fkey" FOREIGN KEY ("runtime_id") REFERENCES "runtimes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_invocation_uid_fkey" FOREIGN KEY ("invocation_uid") REFERENCES "invocations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invocation_actions" ADD CONSTRAINT "invocation_actions_invocation_uid_fkey" FOREIGN KEY ("invocation_uid") REFERENCES "invocations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

