-- AlterTable
ALTER TABLE "attempts" ADD COLUMN     "arguments" JSONB;

-- AlterTable
ALTER TABLE "invocations" ADD COLUMN     "args_digest" TEXT,
ADD COLUMN     "duplicate_review" TEXT,
ADD COLUMN     "possible_duplicate_of" TEXT;

-- AlterTable
ALTER TABLE "policies" ADD COLUMN     "duplicate_window_s" INTEGER;

-- AlterTable
ALTER TABLE "tool_catalog_entries" ADD COLUMN     "volatile_args" JSONB;

-- CreateTable
CREATE TABLE "invocation_digests" (
    "runtime_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "args_digest" TEXT NOT NULL,
    "invocation_uid" UUID NOT NULL,

    CONSTRAINT "invocation_digests_pkey" PRIMARY KEY ("runtime_id","tool","args_digest","invocation_uid")
);

-- CreateTable
CREATE TABLE "duplicate_clearances" (
    "runtime_id" UUID NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "note" TEXT,

    CONSTRAINT "duplicate_clearances_pkey" PRIMARY KEY ("runtime_id","invocation_id","idempotency_key")
);

-- Duplicates when the key changes (decision 028). Indexes with predicates or expressions, which
-- Prisma's schema cannot state, live only here.

-- Possible duplicate effects waiting for an operator's review (the queue's count reads them).
CREATE INDEX "invocations_duplicate_review_idx" ON "invocations" ("runtime_id", "status_since") WHERE "duplicate_review" = 'open';

-- The guard's refusals of possible duplicates, by the earlier invocation (its page offers "not a duplicate").
CREATE INDEX "guard_checks_possible_duplicate_idx" ON "guard_checks" ("runtime_id", "invocation_id", "at") WHERE "reason" = 'possible_duplicate';

-- The queue's order (lib/outcome/queue-order.ts) gains the open review of a possible duplicate: such an
-- invocation waits with what needs a person (tier 1), whatever its status.
DROP INDEX "invocations_queue_order_idx";
CREATE INDEX "invocations_queue_order_idx" ON "invocations" (
  (CASE WHEN status IN ('outcome_unknown', 'pending') THEN 0 WHEN status IN ('partially_applied', 'awaiting_approval', 'verifying', 'escalated') THEN 1 WHEN duplicate_review = 'open' THEN 1 ELSE 2 END),
  (CASE effect_class WHEN 'money' THEN 0 WHEN 'destructive' THEN 1 WHEN 'send' THEN 2 WHEN 'read' THEN 4 ELSE 3 END),
  (CASE WHEN status = 'pending' AND stall_at IS NOT NULL THEN stall_at ELSE status_since END),
  id
);

-- The built-in duplicate windows for the classes that already have a row of their own (money and
-- destructive a day, send an hour); the default row `*` and the other classes stay off.
UPDATE "policies" SET "duplicate_window_s" = CASE "effect_class" WHEN 'money' THEN 86400 WHEN 'destructive' THEN 86400 WHEN 'send' THEN 3600 END
 WHERE "effect_class" IN ('money', 'destructive', 'send');
