-- The queue's order (lib/domain/queue.ts): headline (outcome unknown, stalled)
-- first, then what needs a person, then the settled; within each, money →
-- destructive → send → create → read (anything else is a write, with create);
-- then the longest waiting. Expressions Prisma's schema cannot state, so this
-- index lives only here; `prisma migrate diff` leaves expression indexes alone.
CREATE INDEX "invocations_queue_order_idx" ON "invocations" (
  (CASE WHEN status IN ('outcome_unknown', 'pending') THEN 0 WHEN status IN ('partially_applied', 'awaiting_approval', 'verifying', 'escalated') THEN 1 ELSE 2 END),
  (CASE effect_class WHEN 'money' THEN 0 WHEN 'destructive' THEN 1 WHEN 'send' THEN 2 WHEN 'read' THEN 4 ELSE 3 END),
  (CASE WHEN status = 'pending' AND stall_at IS NOT NULL THEN stall_at ELSE status_since END),
  id
);
