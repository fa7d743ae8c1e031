import "server-only";
import { canonicalSql, type ChainKind } from "../chain/entries";
import type { Db } from "../db/client";

// Each chained row's place, hashes and canonical content as the chain hashed it (lib/chain/entries.ts), so a
// pack carries what an offline check needs to recompute its link; null for rows no chain covers.
const chainColumns = (kind: ChainKind) => `chain_seq::text AS chain_seq, encode(chain_content, 'hex') AS chain_content,
         encode(chain_prev, 'hex') AS chain_prev,
         CASE WHEN chain_seq IS NULL THEN NULL ELSE ${canonicalSql(kind, (column) => column)} END AS chain_canonical`;

// Every row an evidence pack is made of, for one invocation (its runtime and uid), each list whole and in a
// stated order; and which invocations an export names. Raw SQL through the driver with bound parameters; the
// json columns read exactly (lib/json), so a caller's long integer keeps its digits in the signed pack.

export type Raw = Record<string, unknown>;

const ATTEMPTS = `
  SELECT event_key, event_id, seq, attempt_id, attempt_no, phase, at, received_at, tool, effect_class, idempotency_key,
         budget_left_s, args_digest, arguments, summary, dialect, wrapper_dialect, outcome, commit_state, code, category,
         retry_directive, not_before, max_attempts_remaining, next_action, dispatch_stage, probe_result, safe_details,
         agent_message, user_message, items, envelope, ignored, ${chainColumns("attempt")}
    FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid
   ORDER BY coalesce(attempt_no, 0), at, received_at, event_key`;

const TRANSITIONS = `
  SELECT id::text AS id, tool, effect_class, from_status, to_status, commit_state, resolution_by, not_before, version,
         at, recorded_at, ${chainColumns("transition")}
    FROM invocation_transitions WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid
   ORDER BY id`;

const ACTIONS = `
  SELECT seq, action, actor, at, from_status, to_status, note, payload, ${chainColumns("action")}
    FROM invocation_actions WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid
   ORDER BY seq`;

// The guard's refusals that name the invocation (by its id in its runtime): each was a try the guard held back
// because of this call. Only refusals are recorded (lib/guard).
const GUARD_REFUSALS = `
  SELECT id::text AS id, task_id, invocation_id, tool, idempotency_key, allow, reason, at, ${chainColumns("guard")}
    FROM guard_checks
   WHERE runtime_id = $1::uuid AND NOT allow
     AND invocation_id = (SELECT invocation_id FROM invocations WHERE runtime_id = $1::uuid AND id = $2::uuid)
   ORDER BY at, chain_seq, id`;

const VERIFICATIONS = `
  SELECT id::text AS id, attempt, state, tries, config, due_at, first_dispatched_at, answers, created_at, updated_at
    FROM verification_requests WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid
   ORDER BY attempt`;

export type HistoryRows = {
  attempts: Raw[];
  transitions: Raw[];
  actions: Raw[];
  guard_refusals: Raw[];
  verifications: Raw[];
};

/** The whole history of one invocation: its attempts, transitions, actions, guard refusals and verification requests. */
export async function selectHistory(db: Db, runtimeId: string, uid: string): Promise<HistoryRows> {
  const params = [runtimeId, uid];
  const [attempts, transitions, actions, guardRefusals, verifications] = await Promise.all([
    db.driver.query<Raw>(ATTEMPTS, params, { exactJson: true }),
    db.driver.query<Raw>(TRANSITIONS, params),
    db.driver.query<Raw>(ACTIONS, params, { exactJson: true }),
    db.driver.query<Raw>(GUARD_REFUSALS, params),
    db.driver.query<Raw>(VERIFICATIONS, params, { exactJson: true }),
  ]);
  return { attempts, transitions, actions, guard_refusals: guardRefusals, verifications };
}

/** What an export names: one task, or invocations first seen in [from, to). */
export type ExportQuery = { runtimeId: string | null; runtime?: string; taskId?: string; from?: Date; to?: Date };

/** The invocations an export covers, in the order it lists them: first seen, then runtime and id; at most `limit`. */
export async function selectExportedInvocations(
  db: Db,
  query: ExportQuery,
  limit: number,
): Promise<Array<{ runtime: string; invocation_id: string }>> {
  return db.driver.query<{ runtime: string; invocation_id: string }>(
    `SELECT r.name AS runtime, i.invocation_id
       FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
      WHERE ($1::uuid IS NULL OR i.runtime_id = $1::uuid) AND ($2::text IS NULL OR r.name = $2)
        AND ($3::text IS NULL OR i.task_id = $3)
        AND ($4::timestamptz IS NULL OR i.first_seen_at >= $4::timestamptz)
        AND ($5::timestamptz IS NULL OR i.first_seen_at < $5::timestamptz)
      ORDER BY i.first_seen_at, r.name, i.invocation_id
      LIMIT $6::int`,
    [
      query.runtimeId,
      query.runtime ?? null,
      query.taskId ?? null,
      query.from?.toISOString() ?? null,
      query.to?.toISOString() ?? null,
      limit,
    ],
  );
}
