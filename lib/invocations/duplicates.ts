import "server-only";
import { insertActionsTail } from "./action-insert";
import type { SqlDriver, Tx } from "../db/driver";
import { duplicateOf, OPEN_REVIEW, reviewedInQueue, type DuplicateCandidate } from "../outcome/duplicates";
import type { GuardCandidate } from "../outcome/guard-rules";
import { loadCachedPolicies, resolvePolicy } from "../policies/policies";
import { INVOCATION_COLUMNS, type InvocationRow } from "../write/states";

// Duplicates the key cannot catch (decision 028): earlier invocations of one
// runtime and tool with the same arguments digest under another idempotency
// key. The guard asks before a write (lib/guard/guard.ts refuses it as
// `possible_duplicate`); ingest asks after storing records that came without
// the guard, and flags what it finds here. The rules are lib/outcome/duplicates.ts's.

/** One invocation to look for earlier duplicates of. `before`: only invocations first seen before this (or at it, with a smaller id than `uid`) count as earlier. */
export type DuplicateQuestion = {
  tool: string;
  digest: string;
  key: string | null;
  since: string;
  before: string | null;
  uid: string | null;
};

type CandidateRow = InvocationRow & { question: number; last_attempt: number | null };

// $1 runtime, $2 the questions: for each, the latest invocations (at most 20) of the same tool and digest
// whose last attempt is inside the window, under another key (or none), not the asking invocation, and
// not cleared for its key by an operator ("not a duplicate"). Found through invocation_digests; an
// invocation that has since taken another digest is passed over.
const candidatesQuery = {
  name: "settle_duplicate_candidates",
  text: `SELECT c.*, q.n AS question
      FROM jsonb_to_recordset($2::jsonb) AS q(n int, tool text, digest text, key text, since timestamptz, before timestamptz, uid uuid)
      JOIN LATERAL (
        SELECT ${INVOCATION_COLUMNS.split(", ")
          .map((c) => `m.${c}`)
          .join(", ")}, (m.fold ->> 'lastAttempt')::int AS last_attempt
          FROM invocation_digests g JOIN invocations m ON m.id = g.invocation_uid
         WHERE g.runtime_id = $1::uuid AND g.tool = q.tool AND g.args_digest = q.digest
           AND m.runtime_id = $1::uuid AND m.tool = q.tool AND m.args_digest = q.digest
           AND (q.key IS NULL OR m.idempotency_key IS DISTINCT FROM q.key)
           AND (q.uid IS NULL OR m.id <> q.uid)
           AND m.last_attempt_at >= q.since
           -- Earlier only (ties by id), so two invocations never flag each other.
           AND (q.before IS NULL OR m.first_seen_at < q.before OR (m.first_seen_at = q.before AND m.id < q.uid))
           AND (q.key IS NULL OR NOT EXISTS (
                 SELECT 1 FROM duplicate_clearances d
                  WHERE d.runtime_id = $1::uuid AND d.invocation_id = m.invocation_id AND d.idempotency_key = q.key))
         ORDER BY m.last_attempt_at DESC
         LIMIT 20) AS c ON true`,
};

/** An invocation row (with the number of its last attempt) as the guard's and the duplicate rules read it: one reading for both. */
export const toCandidate = (r: InvocationRow & { last_attempt: number | null }): DuplicateCandidate => ({
  invocationId: r.invocation_id,
  taskId: r.task_id,
  idempotencyKey: r.idempotency_key as string | null,
  status: r.status as GuardCandidate["status"],
  commitState: String(r.commit_state),
  stallAt: r.stall_at as string | null,
  notBefore: r.not_before as string | null,
  resolution: r.resolution as GuardCandidate["resolution"],
  lastAttempt: Number(r.last_attempt ?? 1),
  lastAttemptAt: String(r.last_attempt_at),
});

/** The earlier invocations each question may duplicate, by question (in order). */
export async function loadDuplicateCandidates(
  tx: Tx,
  runtimeId: string,
  questions: DuplicateQuestion[],
): Promise<DuplicateCandidate[][]> {
  const out: DuplicateCandidate[][] = questions.map(() => []);
  if (questions.length === 0) return out;
  const rows = await tx.query<CandidateRow>(candidatesQuery, [
    runtimeId,
    JSON.stringify(questions.map((q, n) => ({ n, ...q }))),
  ]);
  for (const r of rows) out[Number(r.question)]?.push(toCandidate(r));
  return out;
}

/** The duplicate window of an effect class by the policies in effect (cached for a moment); null: off. */
export async function loadDuplicateWindowS(driver: SqlDriver, effectClass: string | null): Promise<number | null> {
  return resolvePolicy(await loadCachedPolicies(driver), effectClass).duplicate_window_s;
}

const minus = (iso: string, seconds: number) => new Date(Date.parse(iso) - seconds * 1000).toISOString();

// $1 runtime, $2 the flags, $3 when: each invocation not flagged yet is marked a possible duplicate of the
// earlier one (open for review in the queue, for the reviewed classes), with a `system` entry in its audit trail.
const flagQuery = {
  name: "settle_flag_possible_duplicates",
  // Locked first in invocation id order, as every writer locks invocations (lib/write/write-statement.ts).
  text: `WITH f AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS f(uid uuid, earlier text, review text, note text)),
      locked AS (
        SELECT i.id FROM invocations i
         WHERE i.runtime_id = $1::uuid AND i.id = ANY(ARRAY(SELECT uid FROM f)) AND i.possible_duplicate_of IS NULL
         ORDER BY i.invocation_id
           FOR UPDATE),
      flagged AS (
        UPDATE invocations i SET possible_duplicate_of = f.earlier, duplicate_review = f.review
          FROM f
         WHERE i.id = f.uid AND i.id IN (SELECT id FROM locked)
        RETURNING i.runtime_id, i.id, i.version, i.status, f.earlier, f.note),
      flags AS (
        SELECT row_number() OVER (ORDER BY id)::int AS ord, runtime_id, gen_random_uuid() AS id, id AS invocation_uid,
               version AS seq, 'flag_possible_duplicate'::text AS action, 'system'::text AS actor, $3::timestamptz AS at,
               status AS from_status, status AS to_status, note, jsonb_build_object('possible_duplicate_of', earlier) AS payload
          FROM flagged),
      ${insertActionsTail("flags", "$1::uuid", "invocation_uid::text AS uid")}`,
};

/** A row the write path just stored, as flagging reads it. */
export type WrittenRow = Pick<InvocationRow, "id" | "invocation_id"> & Record<string, unknown>;

/**
 * After records that came without the guard (envelopes, OTLP spans) are
 * stored: each new digest (`rows`, the invocations created or given another
 * digest) that matches a committed or unknown invocation of the same runtime
 * and tool under another key, first seen earlier and inside its class's
 * window, marks the new invocation `possible_duplicate_of` the earlier one;
 * for money, destructive and send it waits in the queue as a possible
 * duplicate effect. Returns the uids flagged.
 */
export async function flagPossibleDuplicates(
  driver: SqlDriver,
  runtimeId: string,
  rows: WrittenRow[],
  now = new Date(),
): Promise<string[]> {
  if (rows.length === 0) return [];
  const tx = driver.write;
  const policies = await loadCachedPolicies(driver);
  const asked = rows.flatMap((r) => {
    const windowS = resolvePolicy(policies, (r.effect_class as string | null) ?? null).duplicate_window_s;
    if (windowS === null || !r.args_digest) return [];
    const firstSeen = String(r.first_seen_at);
    const question: DuplicateQuestion = {
      tool: String(r.tool),
      digest: String(r.args_digest),
      key: (r.idempotency_key as string | null) ?? null,
      since: minus(firstSeen, windowS),
      before: firstSeen,
      uid: r.id,
    };
    return [{ row: r, question }];
  });
  if (asked.length === 0) return [];
  const found = await loadDuplicateCandidates(
    tx,
    runtimeId,
    asked.map((a) => a.question),
  );
  const flags = asked.flatMap(({ row }, i) => {
    const earlier = duplicateOf(found[i]!, now, "after_the_fact");
    if (!earlier) return [];
    const reviewed = reviewedInQueue((row.effect_class as string | null) ?? null);
    return [
      {
        uid: row.id,
        earlier: earlier.invocationId,
        review: reviewed ? OPEN_REVIEW : null,
        note: `Possible duplicate effect: the same ${String(row.tool)} call (same arguments) as ${earlier.invocationId}, under another idempotency key${reviewed ? "; an operator confirms or dismisses it" : ""}.`,
      },
    ];
  });
  if (flags.length === 0) return [];
  const flagged = await tx.query<{ uid: string }>(flagQuery, [runtimeId, JSON.stringify(flags), now.toISOString()]);
  return flagged.map((f) => f.uid);
}
