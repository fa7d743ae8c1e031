-- The verifier's scheduler looks every second for unknown or stalled calls of tools with a verifier
-- (lib/verify/queries.ts selectCandidates). Through the status index it read every open unknown of every tool,
-- verified or not; by (runtime, tool) over the open ones it reads only the tools asked about.
CREATE INDEX "invocations_verify_candidates_idx" ON "invocations" ("runtime_id", "tool")
  WHERE "status" IN ('outcome_unknown', 'pending');
