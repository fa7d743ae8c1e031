-- CreateTable
CREATE TABLE "policies" (
    "effect_class" TEXT NOT NULL,
    "overdue_after_s" INTEGER,
    "escalate_after_s" INTEGER,
    "approval_expires_after_s" INTEGER,
    "approval_quorum" INTEGER NOT NULL DEFAULT 1,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_by" TEXT,

    CONSTRAINT "policies_pkey" PRIMARY KEY ("effect_class")
);

-- CreateTable
CREATE TABLE "guard_checks" (
    "id" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "task_id" TEXT NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "allow" BOOLEAN NOT NULL,
    "reason" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "guard_checks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invocation_transitions" (
    "id" BIGSERIAL NOT NULL,
    "invocation_uid" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "effect_class" TEXT,
    "from_status" TEXT,
    "to_status" TEXT NOT NULL,
    "commit_state" TEXT NOT NULL,
    "resolution_by" TEXT,
    "version" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "fanned_out" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "invocation_transitions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "invocation_uid" UUID,
    "payload" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" UUID NOT NULL,
    "delivery_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "queue_samples" (
    "at" TIMESTAMPTZ(3) NOT NULL,
    "runtime_id" UUID NOT NULL,
    "size" INTEGER NOT NULL,

    CONSTRAINT "queue_samples_pkey" PRIMARY KEY ("at","runtime_id")
);

-- CreateIndex
CREATE INDEX "guard_checks_at_idx" ON "guard_checks"("at");

-- CreateIndex
CREATE INDEX "guard_checks_runtime_id_idempotency_key_idx" ON "guard_checks"("runtime_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "invocation_transitions_at_idx" ON "invocation_transitions"("at");

-- CreateIndex
CREATE INDEX "invocation_transitions_invocation_uid_id_idx" ON "invocation_transitions"("invocation_uid", "id");

-- CreateIndex
CREATE INDEX "invocation_transitions_fanned_out_id_idx" ON "invocation_transitions"("fanned_out", "id");

-- CreateIndex
CREATE INDEX "webhook_endpoints_runtime_id_idx" ON "webhook_endpoints"("runtime_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_event_id_key" ON "webhook_deliveries"("event_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_created_at_idx" ON "webhook_deliveries"("endpoint_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_attempts_delivery_id_at_idx" ON "webhook_attempts"("delivery_id", "at");

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every change of an invocation's status or commit state becomes a row of
-- invocation_transitions, whichever code path made it (ingest, operator
-- actions, policy). Ingest inserts a placeholder (version 0) and then writes
-- the folded state, so the first real state has no from_status. `at` is the
-- domain time the status began (status_since), not the wall clock, so that
-- metrics follow the runtime's clock and tests can control it.
CREATE FUNCTION settle_record_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.version <> 0 AND OLD.status IS NOT DISTINCT FROM NEW.status
     AND OLD.commit_state IS NOT DISTINCT FROM NEW.commit_state THEN
    RETURN NEW;
  END IF;
  INSERT INTO invocation_transitions
    (invocation_uid, runtime_id, tool, effect_class, from_status, to_status, commit_state, resolution_by, version, at)
  VALUES
    (NEW.id, NEW.runtime_id, NEW.tool, NEW.effect_class, CASE WHEN OLD.version = 0 THEN NULL ELSE OLD.status END,
     NEW.status, NEW.commit_state, NEW.resolution ->> 'by', NEW.version, NEW.status_since);
  RETURN NEW;
END
$$;

CREATE TRIGGER invocations_record_transition
  AFTER UPDATE OF status, commit_state, version ON invocations
  FOR EACH ROW EXECUTE FUNCTION settle_record_transition();
