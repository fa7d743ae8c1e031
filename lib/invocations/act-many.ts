import "server-only";
import { insertActionsSql } from "./action-insert";
import type { Db } from "../db/client";
import { isRetryableConflict } from "../db/errors";
import type { OperatorAction } from "../outcome/actions";
import { resumeWithAction } from "../outcome/fold";
import type { FoldSnapshot } from "../outcome/fold";
import { noteOf, type ActRefusal } from "./act";
import {
  FOLD_READ,
  foldFromHistory,
  INVOCATION_COLUMNS,
  snapshotOf,
  writeStates,
  type InvocationRow,
} from "../write/states";

// One action on many invocations of one runtime in one transaction, for a job that acts on many at once (the
// verifier opening the asks a worker just took, lib/verify). Each invocation goes through the same state machine
// as actOnInvocationQuietly and is taken or refused on its own; the transaction only saves round trips. Approvals
// are not taken here: their quorum is read per invocation, in lib/invocations/act.ts.

type Action = Exclude<OperatorAction, { action: "approve" }>;
export type ManyEntry = { invocationId: string; version: number; audit?: Record<string, unknown> };

const ATTEMPTS = 4;

/** Per entry, in the order given: null when the action was taken, else why not. */
export async function actOnInvocationsQuietly(
  db: Db,
  runtimeId: string,
  entries: readonly ManyEntry[],
  action: Action,
  ctx: { actor: string; now: Date },
): Promise<Array<ActRefusal | null>> {
  if (entries.length === 0) return [];
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await actInOneTransaction(db, runtimeId, entries, action, ctx);
    } catch (error) {
      // Rows are locked in id order, but ingest's statements may lock them in another: run it again.
      if (!isRetryableConflict(error) || attempt >= ATTEMPTS) throw error;
    }
  }
}

function actInOneTransaction(
  ...[db, runtimeId, entries, action, ctx]: Parameters<typeof actOnInvocationsQuietly>
): Promise<Array<ActRefusal | null>> {
  const at = ctx.now.toISOString();
  return db.driver.transaction(
    async (tx) => {
      const rows = await tx.query<InvocationRow>(
        `SELECT ${INVOCATION_COLUMNS} FROM invocations
          WHERE runtime_id = $1::uuid AND invocation_id = ANY($2::text[]) ORDER BY id FOR UPDATE`,
        [runtimeId, entries.map((e) => e.invocationId)],
        FOLD_READ,
      );
      const byId = new Map(rows.map((r) => [r.invocation_id, r]));
      const unfolded = rows.filter((r) => snapshotOf(r) === null).map((r) => r.id);
      const folded =
        unfolded.length > 0 ? await foldFromHistory(tx, runtimeId, unfolded) : new Map<string, FoldSnapshot>();

      const out: Array<ActRefusal | null> = [];
      const acted = new Set<string>();
      const audits: Array<{ uid: string; seq: number; from: string; to: string; payload: string }> = [];
      const updated: Array<{ before: InvocationRow; version: number; state: FoldSnapshot }> = [];
      for (const entry of entries) {
        const row = byId.get(entry.invocationId);
        if (!row) {
          out.push({ code: "NOT_FOUND", message: `No invocation ${entry.invocationId}.` });
          continue;
        }
        // Also a second entry for one invocation: the first changed its version.
        if (row.version !== entry.version || acted.has(entry.invocationId)) {
          out.push({
            code: "VERSION_CONFLICT",
            message: `Someone else changed this invocation: it is now version ${row.version}.`,
          });
          continue;
        }
        const current = snapshotOf(row) ?? folded.get(row.id);
        if (!current) {
          out.push({ code: "NOT_FOUND", message: `No invocation ${entry.invocationId}.` });
          continue;
        }
        const { snapshot, result } = resumeWithAction(current, action, { actor: ctx.actor, at });
        if (!result.ok) {
          out.push({ code: result.code, message: result.message });
          continue;
        }
        const seq = row.version + 1;
        audits.push({
          uid: row.id,
          seq,
          from: result.from,
          to: result.to,
          payload: JSON.stringify({ ...entry.audit, action }),
        });
        updated.push({ before: row, version: seq, state: snapshot });
        out.push(null);
      }
      if (audits.length > 0) {
        await tx.query(
          insertActionsSql(
            `SELECT a.ord::int AS ord, $10::uuid AS runtime_id, gen_random_uuid() AS id, a.uid AS invocation_uid, a.seq,
                    $1::text AS action, $2::text AS actor, $3::timestamptz AS at, a.from_status, a.to_status, $4::text AS note, a.payload
               FROM unnest($5::uuid[], $6::int[], $7::text[], $8::text[], $9::jsonb[]) WITH ORDINALITY
                    AS a(uid, seq, from_status, to_status, payload, ord)`,
            "$10::uuid",
          ),
          [
            action.action,
            ctx.actor,
            at,
            noteOf(action),
            audits.map((a) => a.uid),
            audits.map((a) => a.seq),
            audits.map((a) => a.from),
            audits.map((a) => a.to),
            audits.map((a) => a.payload),
            runtimeId,
          ],
        );
        await writeStates(tx, runtimeId, { updated });
      }
      return out;
    },
    { settings: ["statement_timeout = '30s'"] },
  );
}
