-- The guard's refusals that name one invocation, for its evidence pack (lib/evidence/queries.ts): partial, as
-- only refusals are recorded; kept out of schema.prisma like the other partial indexes of guard_checks.
CREATE INDEX "guard_checks_denied_invocation_idx" ON "guard_checks" ("runtime_id", "invocation_id", "at") WHERE NOT "allow";
