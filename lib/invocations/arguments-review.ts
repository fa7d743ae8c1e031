import "server-only";
import { insertOneActionSql } from "./action-insert";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { CHECK_ARGUMENTS, OPEN_REVIEW } from "../outcome/duplicates";
import { runtimeChoiceSchema } from "../outcome/record-fields";
import { cleanText } from "../redact/redact";
import { getInvocation, type InvocationView } from "./read";

// A call that ran with other arguments than a person approved waits in the queue, whatever its status,
// until someone checks what ran and says so (with a note), audited on the invocation. Like a duplicate
// review (duplicate-review.ts) it changes no status, version or fold: the check is a column of its own.

export const argumentsReviewRequestSchema = z
  .object({
    note: z
      .string()
      .trim()
      .min(1, "say what you found (e.g. the refund ran for 120 EUR, not 1200: corrected in the dashboard)")
      .max(4000)
      .describe("What the person found when they checked what ran."),
    runtime: runtimeChoiceSchema,
  })
  .meta({ id: "ArgumentsReviewRequest" });
export type ArgumentsReviewRequest = z.infer<typeof argumentsReviewRequestSchema>;

type Locked = { id: string; runtime_id: string; version: number; status: string; args_review: string | null };

/** Marks the other arguments an invocation ran with as checked: it leaves the queue. */
export async function checkRanArguments(
  db: Db,
  invocationId: string,
  request: ArgumentsReviewRequest,
  actor: string,
  now = new Date(),
): Promise<InvocationView> {
  let runtimeId: string | null = null;
  if (request.runtime) {
    const found = await db.prisma.runtime.findUnique({ where: { name: request.runtime }, select: { id: true } });
    if (!found) throw new ApiError("NOT_FOUND", `No runtime ${request.runtime}.`);
    runtimeId = found.id;
  }
  const note = cleanText(request.note);
  const runtime = await db.driver.transaction(async (tx) => {
    const rows = await tx.query<Locked>(
      `SELECT id::text, runtime_id::text, version, status, args_review FROM invocations
        WHERE invocation_id = $1 AND ($2::uuid IS NULL OR runtime_id = $2::uuid) ORDER BY id FOR UPDATE`,
      [invocationId, runtimeId],
    );
    if (rows.length > 1) throw new ApiError("NOT_FOUND", "Several runtimes use this invocation id; name the runtime.");
    const row = rows[0];
    if (!row) throw new ApiError("NOT_FOUND", `No invocation ${invocationId}.`);
    if (row.args_review !== OPEN_REVIEW) {
      throw new ApiError(
        "TRANSITION_REFUSED",
        row.args_review === null
          ? `Invocation ${invocationId} ran with the arguments approved (or needed no approval): there is nothing to check.`
          : "What this invocation ran with was checked already.",
        { arguments_review: row.args_review },
      );
    }
    await tx.query(`UPDATE invocations SET args_review = 'checked' WHERE id = $1::uuid`, [row.id]);
    // Its place among the records: after those of the invocation's current version.
    await tx.query(insertOneActionSql, [
      row.id,
      row.version,
      CHECK_ARGUMENTS,
      actor,
      now.toISOString(),
      row.status,
      row.status,
      note,
      "{}",
      row.runtime_id,
    ]);
    return row.runtime_id;
  });
  return (await getInvocation(db, { runtimeId: runtime }, invocationId))!;
}
