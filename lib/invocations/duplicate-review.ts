import "server-only";
import { insertOneActionSql } from "./action-insert";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import type { Tx } from "../db/driver";
import { OPEN_REVIEW, type DuplicateAction } from "../outcome/duplicates";
import { idempotencyKeySchema, runtimeChoiceSchema } from "../outcome/record-fields";
import { cleanText } from "../redact/redact";
import { getInvocation, type InvocationView } from "./read";

// An operator's word on a possible duplicate (decision 028), each one audited
// on the invocation it concerns (invocation_actions, with the note):
// - on an invocation flagged after the fact: confirmed (it is a duplicate
//   effect; the note says what was done, e.g. "refunded re_123") or dismissed
//   (it is not; its key is then cleared against the earlier invocation);
// - on an earlier invocation the guard refused a write for: "not a duplicate"
//   for that write's key, after which the guard allows it.
// Neither changes the invocation's status, version or fold: the review is a
// column of its own, and the clearances are rows of duplicate_clearances.

const note = z.string().trim().max(4000);

export const duplicateReviewRequestSchema = z
  .discriminatedUnion("verdict", [
    z.object({
      verdict: z.literal("confirmed"),
      note: note
        .min(1, "say what was done about it (e.g. refunded re_123)")
        .describe("What was done about the duplicate effect."),
    }),
    z.object({ verdict: z.literal("dismissed"), note: note.nullish().describe("Why it is not a duplicate.") }),
  ])
  .and(z.object({ runtime: runtimeChoiceSchema }))
  .meta({ id: "DuplicateReviewRequest" });
export type DuplicateReviewRequest = z.infer<typeof duplicateReviewRequestSchema>;

export const notDuplicateRequestSchema = z
  .object({
    idempotency_key: idempotencyKeySchema.describe(
      "The key of the write the guard refused as a possible duplicate of this invocation.",
    ),
    note: note.nullish(),
    runtime: runtimeChoiceSchema,
  })
  .meta({ id: "NotDuplicateRequest" });
export type NotDuplicateRequest = z.infer<typeof notDuplicateRequestSchema>;

type LockedRow = {
  id: string;
  runtime_id: string;
  invocation_id: string;
  version: number;
  status: string;
  idempotency_key: string | null;
  possible_duplicate_of: string | null;
  duplicate_review: string | null;
};

const lockQuery = {
  name: "settle_duplicate_review_lock",
  text: `SELECT id::text, runtime_id::text, invocation_id, version, status, idempotency_key, possible_duplicate_of, duplicate_review
           FROM invocations
          WHERE invocation_id = $1 AND ($2::uuid IS NULL OR runtime_id = $2::uuid)
          ORDER BY id FOR UPDATE`,
};

const auditQuery = { name: "settle_duplicate_review_audit", text: insertOneActionSql };

const clearQuery = {
  name: "settle_duplicate_clear",
  text: `INSERT INTO duplicate_clearances (runtime_id, invocation_id, idempotency_key, actor, at, note)
         VALUES ($1::uuid, $2, $3, $4, $5::timestamptz, $6)
         ON CONFLICT (runtime_id, invocation_id, idempotency_key) DO NOTHING
         RETURNING idempotency_key`,
};

async function runtimeIdOf(db: Db, runtime: string | undefined): Promise<string | null> {
  if (!runtime) return null;
  const found = await db.prisma.runtime.findUnique({ where: { name: runtime }, select: { id: true } });
  if (!found) throw new ApiError("NOT_FOUND", `No runtime ${runtime}.`);
  return found.id;
}

async function lockInvocation(tx: Tx, invocationId: string, runtimeId: string | null): Promise<LockedRow> {
  const rows = await tx.query<LockedRow>(lockQuery, [invocationId, runtimeId]);
  if (rows.length > 1) throw new ApiError("NOT_FOUND", "Several runtimes use this invocation id; name the runtime.");
  if (!rows[0]) throw new ApiError("NOT_FOUND", `No invocation ${invocationId}.`);
  return rows[0];
}

async function audit(
  tx: Tx,
  row: LockedRow,
  entry: { action: DuplicateAction; actor: string; at: string; note: string | null; payload: Record<string, unknown> },
) {
  // Its place among the records that arrived: after those of the invocation's current version.
  await tx.query(auditQuery, [
    row.id,
    row.version,
    entry.action,
    entry.actor,
    entry.at,
    row.status,
    row.status,
    entry.note,
    JSON.stringify(entry.payload),
    row.runtime_id,
  ]);
}

async function clearKey(
  tx: Tx,
  row: { runtime_id: string },
  earlier: string,
  key: string,
  actor: string,
  at: string,
  noteText: string | null,
): Promise<boolean> {
  return (await tx.query(clearQuery, [row.runtime_id, earlier, key, actor, at, noteText])).length > 0;
}

/**
 * Runs `act` on the invocation, locked, in one transaction (the note cleaned, the time as text), and answers the
 * invocation as it reads after: the frame of both reviews.
 */
async function onLocked(
  db: Db,
  invocationId: string,
  request: { runtime?: string; note?: string | null },
  now: Date,
  act: (tx: Tx, row: LockedRow, at: string, noteText: string | null) => Promise<void>,
): Promise<InvocationView> {
  const runtimeId = await runtimeIdOf(db, request.runtime);
  const at = now.toISOString();
  const noteText = request.note ? cleanText(request.note) : null;
  const runtime = await db.driver.transaction(async (tx) => {
    const row = await lockInvocation(tx, invocationId, runtimeId);
    await act(tx, row, at, noteText);
    return row.runtime_id;
  });
  return (await getInvocation(db, { runtimeId: runtime }, invocationId))!;
}

/** Confirms or dismisses the possible duplicate effect an invocation was flagged as. */
export async function reviewPossibleDuplicate(
  db: Db,
  invocationId: string,
  request: DuplicateReviewRequest,
  actor: string,
  now = new Date(),
): Promise<InvocationView> {
  return onLocked(db, invocationId, request, now, async (tx, row, at, noteText) => {
    if (row.possible_duplicate_of === null)
      throw new ApiError(
        "TRANSITION_REFUSED",
        `Invocation ${invocationId} is not flagged as a possible duplicate: there is nothing to review.`,
      );
    if (row.duplicate_review !== OPEN_REVIEW && row.duplicate_review !== null) {
      throw new ApiError("TRANSITION_REFUSED", `This possible duplicate was already ${row.duplicate_review}.`, {
        duplicate_review: row.duplicate_review,
      });
    }
    await tx.query(`UPDATE invocations SET duplicate_review = $2 WHERE id = $1::uuid`, [row.id, request.verdict]);
    const earlier = row.possible_duplicate_of;
    await audit(tx, row, {
      action: request.verdict === "confirmed" ? "confirm_duplicate" : "dismiss_duplicate",
      actor,
      at,
      note: noteText,
      payload: { possible_duplicate_of: earlier, verdict: request.verdict },
    });
    // Not a duplicate: the same arguments under this key are allowed again (the guard, later records).
    if (request.verdict === "dismissed" && row.idempotency_key !== null)
      await clearKey(tx, row, earlier, row.idempotency_key, actor, at, noteText);
  });
}

/** "Not a duplicate": a write under `idempotency_key` with this invocation's arguments is its own; the guard allows it from now on. */
export async function clearPossibleDuplicate(
  db: Db,
  invocationId: string,
  request: NotDuplicateRequest,
  actor: string,
  now = new Date(),
): Promise<InvocationView> {
  // As the guard stores the key it refused (lib/guard/guard.ts).
  const key = cleanText(request.idempotency_key);
  return onLocked(db, invocationId, request, now, async (tx, row, at, noteText) => {
    if (row.idempotency_key === key) {
      throw new ApiError(
        "INVALID_REQUEST",
        "That is this invocation's own key: a write under it is this invocation's retry, which the guard judges by its outcome.",
        { path: "idempotency_key" },
      );
    }
    const added = await clearKey(tx, row, row.invocation_id, key, actor, at, noteText);
    if (added) {
      await audit(tx, row, {
        action: "not_duplicate",
        actor,
        at,
        note: `A write under ${key} is not a duplicate of this one${noteText ? `: ${noteText}` : "."}`,
        payload: { idempotency_key: key },
      });
    }
  });
}
