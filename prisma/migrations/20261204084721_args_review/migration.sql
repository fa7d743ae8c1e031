-- A call that ran with other arguments than a person approved (the fold's argsMismatch) waits in the queue,
-- whatever its status, until someone checks what ran (args_review: open → checked, lib/invocations/arguments-review.ts).
ALTER TABLE "invocations" ADD COLUMN "args_review" TEXT;

-- The queue's order (lib/outcome/queue-order.ts) gains the open check of other arguments: tier 1, with what
-- needs a person.
DROP INDEX "invocations_queue_order_idx";
CREATE INDEX "invocations_queue_order_idx" ON "invocations" (
  (CASE WHEN status IN ('outcome_unknown', 'pending') THEN 0 WHEN status IN ('partially_applied', 'awaiting_approval', 'verifying', 'escalated') THEN 1 WHEN duplicate_review = 'open' THEN 1 WHEN args_review = 'open' THEN 1 ELSE 2 END),
  (CASE effect_class WHEN 'money' THEN 0 WHEN 'destructive' THEN 1 WHEN 'send' THEN 2 WHEN 'read' THEN 4 ELSE 3 END),
  (CASE WHEN status = 'pending' AND stall_at IS NOT NULL THEN stall_at ELSE status_since END),
  id
);

-- The queue's count reads the open checks as it reads open duplicate reviews.
CREATE INDEX "invocations_args_review_idx" ON "invocations" ("runtime_id", "status_since") WHERE "args_review" = 'open';
