-- A task's page shows the guard's refusals of its calls (lib/invocations/guard-refusals.ts): refused calls by
-- runtime and task. Partial: refusals are a small share of the guard's answers.
CREATE INDEX "guard_checks_denied_task_idx" ON "guard_checks" ("runtime_id", "task_id", "at") WHERE NOT "allow";
