import "server-only";
import { chainedInsertSql } from "../chain/entries";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import type { Tx } from "../db/driver";
import {
  type RuntimeRef,
  summarizeCalls,
  deriveInvocationId,
  prepareRecord,
  readArguments,
  type ToolReading,
} from "../ingest";
import { catalogOnce, toolReadingOf, type CatalogOnce } from "../catalog/load";
import { storeRecords } from "../write/store-records";
import { FOLD_READ, INVOCATION_COLUMNS, type InvocationRow } from "../write/states";
import { cleanText } from "../redact/redact";
import { decideGuard, guardReasons, type GuardCandidate, type GuardReason } from "../outcome/guard-rules";
import { GUARD_INTENT_PREFIX } from "../outcome/vocabulary";
import { duplicateOf } from "../outcome/duplicates";
import { loadDuplicateWindowS, loadDuplicateCandidates, toCandidate } from "../invocations/duplicates";
import {
  argsDigestSchema,
  argumentsSchema,
  budgetSchema,
  effectClassTextSchema,
  idempotencyKeySchema,
  idSchema,
  timeTextSchema,
  toolNameSchema,
} from "../outcome/record-fields";

// POST /api/v1/guard (docs/outcome-model.md §5): asked before a write. It looks at every
// invocation of the runtime with the write's idempotency key and, when none is
// committed, unknown or in flight, records the intent (source article 004 (docs/outcome-model.md)'s write-ahead
// record, stored exactly as a posted `intent`) so the invocation is `pending`.
// Check and intent are one transaction under an advisory lock on (runtime,
// key): of any number of concurrent calls for one key, one is allowed.
// Every answer is kept in guard_checks; each denial is a duplicate prevented.
// A write that carries its arguments (or their digest) is also held against
// the invocations of the same tool and arguments under other keys, inside the
// duplicate window of its class (decision 028): the model may have minted a
// new key for a retry. Those are read under a second advisory lock, on
// (runtime, tool, digest), so two such writes cannot both pass.

export const guardRequestSchema = z
  .object({
    task_id: idSchema,
    invocation_id: idSchema
      .optional()
      .describe(
        "The invocation this write belongs to; left out, Settle picks one (a retryable one with this key, or a new one).",
      ),
    tool: toolNameSchema,
    idempotency_key: idempotencyKeySchema,
    effect_class: effectClassTextSchema.optional(),
    at: timeTextSchema
      .optional()
      .describe(
        "When the write is about to be dispatched (ISO 8601), by the clock that stamps its outcome record; default Settle's now.",
      ),
    budget_left_s: budgetSchema
      .optional()
      .describe("The intent's budget: past it without an outcome the invocation is stalled."),
    arguments: argumentsSchema
      .optional()
      .describe(
        "The call's arguments (a JSON object, at most 64 KiB): stored with the intent, secrets redacted, and digested without the tool's volatile arguments. Within the duplicate window of the effect class, a write under a new idempotency key whose arguments match an invocation that is committed, unknown or in flight is refused as possible_duplicate.",
      ),
    args_digest: argsDigestSchema
      .optional()
      .describe("Instead of arguments: their digest, taken as given (see arguments)."),
    envelope: z
      .unknown()
      .optional()
      .describe(
        "What is about to be dispatched (the call as sent), stored with the intent, redacted like any envelope.",
      ),
  })
  .meta({ id: "GuardRequest" });
export type GuardRequestBody = z.infer<typeof guardRequestSchema>;

export const guardAnswerSchema = z
  .object({
    allow: z.boolean(),
    reason: z.enum(guardReasons).nullable(),
    invocation_id: z
      .string()
      .describe("Allowed: the invocation the intent was recorded for. Denied: the invocation that blocks the write."),
    attempt: z
      .number()
      .int()
      .describe(
        "Allowed: the attempt number of the recorded intent, for the outcome record. Denied: the blocking invocation's latest attempt.",
      ),
  })
  .meta({ id: "GuardAnswer" });
export type GuardAnswer = z.infer<typeof guardAnswerSchema>;

type CandidateRow = InvocationRow & { last_attempt: number | null };

// $1 runtime, $2 the key, $3 the ids the call may use (named, or derived from task and key):
// the invocations with the key, and those with those ids, whole and locked (in invocation id
// order, as every writer locks them: lib/write/write-statement.ts), so the intent folds onto
// the row read here without reading it again. The last attempt is the fold's, kept on the row.
// A statement of its own, after the advisory lock: its snapshot sees every guard before it.
const candidatesQuery = {
  name: "settle_guard_candidates_locked",
  // Two exact lookups, each by every column of its index (see selectStates in lib/write/states.ts).
  text: `SELECT ${INVOCATION_COLUMNS}, (fold ->> 'lastAttempt')::int AS last_attempt
      FROM invocations
     WHERE id = ANY(ARRAY(
             SELECT id FROM invocations WHERE runtime_id = $1::uuid AND idempotency_key = $2
             UNION
             SELECT i.id FROM unnest($3::text[]) AS k(invocation_id)
               JOIN LATERAL (SELECT id FROM invocations WHERE runtime_id = $1::uuid AND invocation_id = k.invocation_id LIMIT 1) AS i ON true))
     ORDER BY invocation_id
     FOR UPDATE`,
};

// Rows from before the fold was kept have no last attempt stored: counted from their attempts.
const lastAttemptQuery = {
  name: "settle_guard_last_attempt",
  text: `SELECT invocation_uid::text AS uid, coalesce(max(coalesce(attempt_no, 1)), 0)::int AS last_attempt
           FROM attempts WHERE runtime_id = $1::uuid AND invocation_uid = ANY($2::uuid[]) GROUP BY invocation_uid`,
};

const recordCheckQuery = {
  name: "settle_guard_check",
  // A refusal joins the runtime's hash chain (lib/chain) in this statement; the candidates are locked already.
  text: chainedInsertSql(
    "guard",
    "$1::uuid::text",
    `SELECT 1 AS ord, gen_random_uuid() AS id, $1::uuid AS runtime_id, $2::text AS task_id, $3::text AS invocation_id,
            $4::text AS tool, $5::text AS idempotency_key, $6::boolean AS allow, $7::text AS reason, $8::timestamptz AS at`,
    ["id", "runtime_id", "task_id", "invocation_id", "tool", "idempotency_key", "allow", "reason", "at"],
  ),
};

async function recordCheck(
  tx: Tx,
  runtimeId: string,
  check: {
    taskId: string;
    invocationId: string;
    tool: string;
    key: string;
    allow: boolean;
    reason: GuardReason | null;
    at: Date;
  },
): Promise<void> {
  await tx.query(recordCheckQuery, [
    runtimeId,
    check.taskId,
    check.invocationId,
    check.tool,
    check.key,
    check.allow,
    check.reason,
    check.at.toISOString(),
  ]);
}

// Two-key advisory lock: its own space, apart from the migration runner's one-key lock.
const lockQuery = {
  name: "settle_guard_lock",
  text: `SELECT pg_advisory_xact_lock(hashtext('settle:guard'), hashtext($1))::text`,
};
// The key's lock, then the arguments' (every guard takes them in this order, so none waits in a cycle).
const lockWithArgsQuery = {
  name: "settle_guard_lock_args",
  text: `SELECT pg_advisory_xact_lock(hashtext('settle:guard'), hashtext($1))::text AS key_lock,
                pg_advisory_xact_lock(hashtext('settle:guard-args'), hashtext($2))::text AS args_lock`,
};

/** The runtime's tool catalog for this request (lib/catalog), read once if at all; one is made when not given. */
export type GuardOptions = { catalog?: CatalogOnce };

/** The write's arguments digest and the duplicate window it is held against; null when either is missing. */
async function duplicateCheckOf(
  db: Db,
  body: GuardRequestBody,
  tool: string,
  tools: ToolReading | undefined,
): Promise<{ digest: string; windowS: number } | null> {
  if (body.arguments === undefined && body.args_digest === undefined) return null;
  const read = readArguments(body.arguments, body.args_digest, tool, tools?.volatileArgs);
  if ("code" in read) throw new ApiError("INVALID_REQUEST", read.message, { path: "arguments" });
  if (read.digest === null) return null;
  const windowS = await loadDuplicateWindowS(db.driver, body.effect_class ?? tools?.effectClass(tool) ?? null);
  return windowS === null ? null : { digest: read.digest, windowS };
}

export async function guardWrite(
  db: Db,
  runtime: RuntimeRef,
  body: GuardRequestBody,
  now = new Date(),
  options: GuardOptions = {},
): Promise<GuardAnswer> {
  const taskId = cleanText(body.task_id);
  const key = cleanText(body.idempotency_key);
  const tool = cleanText(body.tool);
  const named = body.invocation_id === undefined ? null : cleanText(body.invocation_id);
  const derived = deriveInvocationId(taskId, key);
  // The catalog (cached) only for a call that names no effect class, or carries its arguments or their digest.
  const needsCatalog =
    body.effect_class === undefined || body.arguments !== undefined || body.args_digest !== undefined;
  const catalog = options.catalog ?? catalogOnce(db, runtime.id);
  const tools = needsCatalog ? toolReadingOf(await catalog()) : undefined;
  const duplicates = await duplicateCheckOf(db, body, tool, tools);

  return db.driver.transaction(
    async (tx) => {
      if (duplicates)
        await tx.query(lockWithArgsQuery, [`${runtime.id}:${key}`, `${runtime.id}:${tool}:${duplicates.digest}`]);
      else await tx.query(lockQuery, [`${runtime.id}:${key}`]);
      const rows = await tx.query<CandidateRow>(
        candidatesQuery,
        [runtime.id, key, named === null ? [derived] : [named, derived]],
        FOLD_READ,
      );
      const unknownLast = rows.filter((r) => r.last_attempt === null).map((r) => r.id);
      if (unknownLast.length > 0) {
        const counted = new Map(
          (await tx.query<{ uid: string; last_attempt: number }>(lastAttemptQuery, [runtime.id, unknownLast])).map(
            (r) => [r.uid, r.last_attempt],
          ),
        );
        for (const r of rows) if (r.last_attempt === null) r.last_attempt = counted.get(r.id) ?? 0;
      }
      const candidates: GuardCandidate[] = rows.map(toCandidate);

      const verdict = decideGuard(candidates, { taskId, invocationId: named, idempotencyKey: key }, now);
      if (verdict.kind === "refuse") throw new ApiError(verdict.code, verdict.message);
      if (verdict.kind === "deny") {
        await recordCheck(tx, runtime.id, {
          taskId,
          invocationId: verdict.invocationId,
          tool,
          key,
          allow: false,
          reason: verdict.reason,
          at: now,
        });
        const blocking = candidates.find((c) => c.invocationId === verdict.invocationId);
        return {
          allow: false,
          reason: verdict.reason,
          invocation_id: verdict.invocationId,
          attempt: blocking?.lastAttempt ?? 0,
        };
      }
      if (duplicates) {
        const since = new Date(now.getTime() - duplicates.windowS * 1000).toISOString();
        const [found] = await loadDuplicateCandidates(tx, runtime.id, [
          { tool, digest: duplicates.digest, key, since, before: null, uid: null },
        ]);
        const earlier = duplicateOf(found ?? [], now, "guard");
        if (earlier) {
          // A duplicate prevented like any denial: the check names the earlier invocation.
          await recordCheck(tx, runtime.id, {
            taskId,
            invocationId: earlier.invocationId,
            tool,
            key,
            allow: false,
            reason: "possible_duplicate",
            at: now,
          });
          return {
            allow: false,
            reason: "possible_duplicate",
            invocation_id: earlier.invocationId,
            attempt: earlier.lastAttempt,
          };
        }
      }

      const taken = candidates.some((c) => c.invocationId === derived);
      const invocationId = verdict.invocationId ?? (taken ? `inv_${randomUUID()}` : derived);
      const attempt = (verdict.reopens?.lastAttempt ?? 0) + 1;
      const intent = prepareRecord(
        {
          event_id: `${GUARD_INTENT_PREFIX}${randomUUID()}`,
          task_id: verdict.reopens?.taskId ?? taskId,
          invocation_id: invocationId,
          attempt,
          tool,
          phase: "intent",
          at: body.at ?? now.toISOString(),
          idempotency_key: key,
          ...(body.effect_class === undefined ? {} : { effect_class: body.effect_class }),
          ...(body.budget_left_s === undefined ? {} : { budget_left_s: body.budget_left_s }),
          ...(body.args_digest === undefined ? {} : { args_digest: body.args_digest }),
          ...(body.arguments === undefined ? {} : { arguments: body.arguments }),
          ...(body.envelope === undefined ? {} : { envelope: body.envelope }),
        },
        now,
        tools,
      );
      if ("code" in intent)
        throw new ApiError("INVALID_REQUEST", intent.message, intent.path ? { path: intent.path } : {});
      await summarizeCalls([intent], catalog);
      // The rows read above are the stored states (locked), and the check row goes with the intent: one statement.
      const byId = new Map<string, InvocationRow>(rows.map((r) => [r.invocation_id, r]));
      await storeRecords(tx, runtime.id, [intent], {
        known: (id) => byId.get(id) ?? null,
        checks: [
          {
            task_id: taskId,
            invocation_id: invocationId,
            tool,
            idempotency_key: key,
            allow: true,
            reason: null,
            at: now.toISOString(),
          },
        ],
      });
      return { allow: true, reason: null, invocation_id: invocationId, attempt };
    },
    { settings: ["statement_timeout = '30s'"] },
  );
}
