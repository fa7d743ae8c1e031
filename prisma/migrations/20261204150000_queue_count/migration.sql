-- The queue's count (lib/queue/queue.ts, capped at 10,000 by decision 010) read every row of the queue's statuses
-- through a bitmap before it could stop at the cap: its cost grew with the queue. This index holds only the rows
-- that need a person (tier <= 1 of the queue's order, lib/outcome/queue-order.ts, the same expression as
-- invocations_queue_order_idx) with the columns the count's filter reads, so the count is an index-only scan that
-- stops at the cap whatever the table's size.
CREATE INDEX "invocations_queue_count_idx" ON "invocations" (
  (CASE WHEN status IN ('outcome_unknown', 'pending') THEN 0 WHEN status IN ('partially_applied', 'awaiting_approval', 'verifying', 'escalated') THEN 1 WHEN duplicate_review = 'open' THEN 1 WHEN args_review = 'open' THEN 1 ELSE 2 END)
) INCLUDE ("runtime_id", "status", "stall_at", "effect_class", "duplicate_review", "args_review")
WHERE (CASE WHEN status IN ('outcome_unknown', 'pending') THEN 0 WHEN status IN ('partially_applied', 'awaiting_approval', 'verifying', 'escalated') THEN 1 WHEN duplicate_review = 'open' THEN 1 WHEN args_review = 'open' THEN 1 ELSE 2 END) <= 1;
