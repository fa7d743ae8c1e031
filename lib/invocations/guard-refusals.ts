import "server-only";
import type { Db } from "../db/client";
import { date, int, text, type Raw } from "./rows";
import type { GuardRefusal, TaskGuardRefusal } from "./schemas";

// The guard's refusals, where a person reads a call and a task: a run that asked again for a committed (or
// unknown, or in-flight) intent was refused without a call, and the pages say so rather than show one clean
// invocation. Possible duplicates under another key have their own review (duplicate_refusals).

/** At most this many groups (reason, task or invocation, key) are shown, the latest first. */
const SHOWN = 20;

// Same-key refusals naming the invocation: through guard_checks_runtime_id_idempotency_key_idx.
const INVOCATION_REFUSALS = `
  SELECT g.reason, g.task_id, g.idempotency_key, count(*)::int AS refused, max(g.at) AS last_at
    FROM guard_checks g
   WHERE g.runtime_id = $1::uuid AND g.idempotency_key = $2 AND g.invocation_id = $3 AND NOT g.allow
     AND g.reason <> 'possible_duplicate'
   GROUP BY g.reason, g.task_id, g.idempotency_key
   ORDER BY max(g.at) DESC
   LIMIT ${SHOWN}`;

// Every refusal of the task's calls, possible duplicates included: through guard_checks_denied_task_idx.
const TASK_REFUSALS = `
  SELECT g.reason, g.invocation_id, g.idempotency_key, count(*)::int AS refused, max(g.at) AS last_at
    FROM guard_checks g
   WHERE g.runtime_id = $1::uuid AND g.task_id = $2 AND NOT g.allow
   GROUP BY g.reason, g.invocation_id, g.idempotency_key
   ORDER BY max(g.at) DESC
   LIMIT ${SHOWN}`;

const reasonOf = (r: Raw) => text(r.reason) as GuardRefusal["reason"];

/** What both readings of a group of refusals end with, in the schemas' order: its key, how many, the latest. */
const counted = (r: Raw): Pick<GuardRefusal, "idempotency_key" | "refused" | "last_at"> => ({
  idempotency_key: text(r.idempotency_key),
  refused: int(r.refused),
  last_at: date(r.last_at).toISOString(),
});

export async function selectGuardRefusals(
  db: Db,
  invocation: { runtimeId: string; invocationId: string; idempotencyKey: string | null },
): Promise<GuardRefusal[]> {
  if (invocation.idempotencyKey === null) return [];
  const rows = await db.driver.query<Raw>(
    INVOCATION_REFUSALS,
    [invocation.runtimeId, invocation.idempotencyKey, invocation.invocationId],
    { prepareAs: "settle_read_guard_refusals" },
  );
  return rows.map((r) => ({ reason: reasonOf(r), task_id: text(r.task_id), ...counted(r) }));
}

export async function selectTaskGuardRefusals(db: Db, runtimeId: string, taskId: string): Promise<TaskGuardRefusal[]> {
  const rows = await db.driver.query<Raw>(TASK_REFUSALS, [runtimeId, taskId], {
    prepareAs: "settle_read_task_guard_refusals",
  });
  return rows.map((r) => ({ reason: reasonOf(r), invocation_id: text(r.invocation_id), ...counted(r) }));
}
