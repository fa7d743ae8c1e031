import "server-only";
import { insertOneActionSql } from "./action-insert";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { operatorActionSchema, type OperatorAction } from "../outcome/actions";
import { resumeWithAction } from "../outcome/fold";
import {
  FOLD_READ,
  foldFromHistory,
  INVOCATION_COLUMNS,
  snapshotOf,
  writeStates,
  type InvocationRow,
} from "../write/states";
import { getInvocation, type InvocationView } from "./read";
import { quorumFor } from "../policies/policies";
import { runtimeChoiceSchema } from "../outcome/record-fields";
import { redact } from "../redact/redact";
import { stringifyExactJson } from "../json/exact";
import { prepareEdit, refuseEditedArguments, volatileArgsOfCall } from "./approval-edit";

export type ActionTarget = { invocationId: string; runtimeId?: string };
export type ActionContext = {
  actor: string;
  version: number;
  /** Approvals needed; by default the approval_quorum of the policy of the invocation's effect class. */
  quorum?: number;
  now?: Date;
  /** Extra fields for the audit entry's payload, e.g. `{policy: "sla"}` on an escalation by the SLA (lib/invocations/apply-policies.ts). */
  audit?: Record<string, unknown>;
};

export type ActionOutcome =
  | { ok: true; invocation: InvocationView }
  | {
      ok: false;
      code: "NOT_FOUND" | "VERSION_CONFLICT" | "TRANSITION_REFUSED" | "ALREADY_APPROVED" | "INVALID_REQUEST";
      message: string;
      current: InvocationView | null;
    };

type Refusal = Extract<ActionOutcome, { ok: false }>;

export function noteOf(action: OperatorAction): string | null {
  if (action.action === "record_verification") return action.evidence ?? action.note ?? null;
  if (action.action === "assign") return action.note ?? `assigned to ${action.assignee}`;
  return action.note ?? null;
}

const lockQuery = {
  name: "settle_action_lock",
  text: `SELECT ${INVOCATION_COLUMNS}, runtime_id::text FROM invocations
          WHERE invocation_id = $1 AND ($2::uuid IS NULL OR runtime_id = $2::uuid)
          ORDER BY id FOR UPDATE`,
};

const auditQuery = { name: "settle_action_audit", text: insertOneActionSql };

export type ActRefusal = Omit<Refusal, "ok" | "current">;

/**
 * The action through the state machine, without reading the invocation back: null when it was taken, else why
 * not. For a job acting on many invocations (the verifier's asks, lib/verify) that needs no view of each.
 */
export async function actOnInvocationQuietly(
  db: Db,
  target: ActionTarget,
  given: OperatorAction,
  ctx: ActionContext,
): Promise<ActRefusal | null> {
  const at = (ctx.now ?? new Date()).toISOString();
  const edited = given.action === "approve" ? given.arguments : undefined;
  const refused = edited ? refuseEditedArguments(edited) : null;
  if (refused) return { code: "INVALID_REQUEST", message: `Nothing was changed: ${refused}` };
  const volatileArgs = edited ? await volatileArgsOfCall(db, target.invocationId, target.runtimeId) : [];
  // A person's note or evidence is often a pasted reply (`Authorization: Bearer …`): redacted like any envelope.
  let action = redact(given) as OperatorAction;
  return db.driver.transaction(
    async (tx) => {
      const rows = await tx.query<InvocationRow & { runtime_id: string }>(
        lockQuery,
        [target.invocationId, target.runtimeId ?? null],
        FOLD_READ,
      );
      const row = rows[0];
      if (!row || rows.length > 1) {
        return {
          code: "NOT_FOUND",
          message:
            rows.length > 1
              ? "Several runtimes use this invocation id; name the runtime."
              : `No invocation ${target.invocationId}.`,
        } as const;
      }
      if (row.version !== ctx.version) {
        return {
          code: "VERSION_CONFLICT",
          message: `Someone else changed this invocation: you saw version ${ctx.version}, it is now version ${row.version}. Nothing was changed; look at the new state and decide again.`,
        } as const;
      }
      const current = snapshotOf(row) ?? (await foldFromHistory(tx, row.runtime_id, [row.id])).get(row.id);
      if (!current) return { code: "NOT_FOUND", message: `No invocation ${target.invocationId}.` } as const;
      // Every path that approves (API, console, CLI) gets the quorum of the policy in effect now;
      // it is kept in the audit payload, so replaying the fold later counts as it did then.
      const quorum =
        action.action === "approve" ? (ctx.quorum ?? (await quorumFor(tx, current.effectClass))) : ctx.quorum;
      // Edited arguments equal to those the approvals are for are no edit: the approval is stored without them.
      const edit = edited ? await prepareEdit(tx, row, current, edited, volatileArgs) : null;
      if (edited && !edit) action = { ...action, arguments: undefined } as OperatorAction;
      // The action comes after every record that has arrived: it folds onto the stored state.
      const { snapshot, result } = resumeWithAction(current, action, {
        actor: ctx.actor,
        at,
        quorum,
        argumentsDigest: edit?.digest,
      });
      if (!result.ok) return { code: result.code, message: result.message } as const;

      const seq = row.version + 1;
      // An approval names the arguments it approved (the evidence pack's approvals, lib/evidence): the edited
      // ones when it carries an edit or approves one pending; who edited what is the edit's diff.
      const approvedDigest = edit?.digest ?? current.pendingEdit?.digest ?? current.argsDigest ?? null;
      const approved = action.action === "approve" ? { args_digest: approvedDigest } : {};
      const payload = {
        ...ctx.audit,
        action,
        ...(quorum ? { quorum } : {}),
        ...approved,
        ...(edit
          ? { arguments_digest: edit.digest, edit: { before_digest: edit.beforeDigest, changes: edit.changes } }
          : {}),
      };
      await tx.query(auditQuery, [
        row.id,
        seq,
        action.action,
        ctx.actor,
        at,
        result.from,
        result.to,
        noteOf(action),
        stringifyExactJson(payload),
        row.runtime_id,
      ]);
      await writeStates(tx, row.runtime_id, { updated: [{ before: row, version: seq, state: snapshot }] });
      return null;
    },
    { settings: ["statement_timeout = '30s'"] },
  );
}

export async function actOnInvocation(
  db: Db,
  target: ActionTarget,
  action: OperatorAction,
  ctx: ActionContext,
): Promise<ActionOutcome> {
  const refusal = await actOnInvocationQuietly(db, target, action, ctx);
  const invocation = await getInvocation(db, { runtimeId: target.runtimeId }, target.invocationId);
  if (refusal) return { ok: false, ...refusal, current: invocation } satisfies Refusal;
  return { ok: true, invocation: invocation! };
}

export const actionRequestSchema = z.intersection(
  operatorActionSchema,
  z.object({ version: z.number().int().min(0), runtime: runtimeChoiceSchema }),
);
export type ActionRequest = z.infer<typeof actionRequestSchema>;

const refusalCodes = {
  NOT_FOUND: "NOT_FOUND",
  VERSION_CONFLICT: "VERSION_CONFLICT",
  TRANSITION_REFUSED: "TRANSITION_REFUSED",
  ALREADY_APPROVED: "ALREADY_APPROVED",
  INVALID_REQUEST: "INVALID_REQUEST",
} as const;

/**
 * The API's form of actOnInvocation: the updated invocation, or a typed refusal carrying the current state.
 * The console's route and a Slack click (lib/slack, with `audit: {via: "slack", …}`) both act through it.
 */
export async function performAction(
  db: Db,
  invocationId: string,
  request: ActionRequest,
  actor: string,
  options: Pick<ActionContext, "audit"> = {},
): Promise<InvocationView> {
  const { version, runtime, ...action } = request;
  const runtimeId = runtime ? (await db.prisma.runtime.findUnique({ where: { name: runtime } }))?.id : undefined;
  if (runtime && !runtimeId) throw new ApiError("NOT_FOUND", `No runtime ${runtime}.`);
  const outcome = await actOnInvocation(db, { invocationId, runtimeId }, action as OperatorAction, {
    actor,
    version,
    audit: options.audit,
  });
  if (outcome.ok) return outcome.invocation;
  throw new ApiError(
    refusalCodes[outcome.code],
    outcome.message,
    outcome.current ? { version: outcome.current.version, status: outcome.current.status } : {},
  );
}
