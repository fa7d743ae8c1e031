-- Trust metrics (lib/domain/metrics-sql.ts) read narrow slices of large
-- tables by time. Partial, covering indexes serve each slice without touching
-- the rows the hot paths write most: a predicate that does not match costs an
-- insert nothing but its test. Prisma's schema cannot state partial indexes,
-- so they live only here (`prisma migrate diff` leaves them alone); every
-- predicate must stay equal to the query's.

-- Guard denials: the duplicates POST /api/v1/guard prevented.
CREATE INDEX "guard_checks_denied_at_idx" ON "guard_checks" ("at") INCLUDE ("tool", "runtime_id") WHERE NOT "allow";

-- The transitions that start an unknown outcome (metrics-sql.ts UNKNOWN_ENTRY), first per invocation.
CREATE INDEX "invocation_transitions_unknown_entry_idx" ON "invocation_transitions" ("invocation_uid", "id")
  INCLUDE ("at", "tool", "runtime_id", "from_status", "to_status")
  WHERE ("to_status" IN ('outcome_unknown', 'partially_applied')
    OR ("to_status" = 'escalated' AND "commit_state" = 'unknown')
    OR ("from_status" = 'pending' AND "to_status" IN ('verifying', 'reconciled')));

-- Settlements by probe, escalations and approval decisions, by time.
CREATE INDEX "invocation_transitions_decided_at_idx" ON "invocation_transitions" ("to_status", "at")
  INCLUDE ("invocation_uid", "tool", "runtime_id", "commit_state", "resolution_by", "from_status")
  WHERE "to_status" IN ('reconciled', 'escalated', 'approved', 'rejected');

-- Receiver replays: committed outcomes of a retry, and the committed records they are checked against.
CREATE INDEX "attempts_committed_retry_at_idx" ON "attempts" ("at") INCLUDE ("invocation_uid", "attempt_no", "tool", "runtime_id")
  WHERE "phase" = 'outcome' AND "commit_state" = 'committed' AND "attempt_no" > 1;
CREATE INDEX "attempts_committed_idx" ON "attempts" ("invocation_uid", "attempt_no")
  WHERE "commit_state" = 'committed' OR "probe_result" = 'found';

-- Possible duplicate effects: committed invocations grouped by key.
CREATE INDEX "invocations_committed_key_idx" ON "invocations" ("runtime_id", "idempotency_key") INCLUDE ("status_since", "tool")
  WHERE "commit_state" = 'committed' AND "idempotency_key" IS NOT NULL;

-- Retries per invocation: invocations by when they were first seen.
CREATE INDEX "invocations_first_seen_at_idx" ON "invocations" ("first_seen_at");
