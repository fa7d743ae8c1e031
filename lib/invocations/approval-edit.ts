import "server-only";
import type { Db } from "../db/client";
import type { Tx } from "../db/driver";
import { loadToolCatalog } from "../catalog/load";
import { volatileArgsFor } from "../catalog/effect-class";
import { stringifyExactJson } from "../json/exact";
import { approvalTargetDigest, type FoldSnapshot } from "../outcome/fold";
import { ARGUMENTS_MAX_BYTES } from "../outcome/record-fields";
import { redact, REDACTED } from "../redact/redact";
import { argsDigest } from "../write/args-digest";
import { diffArguments, type ArgumentChange } from "./arguments-diff";

// Approve with edits (docs/outcome-model.md §4): the arguments a person gives are digested as a record's would
// be (the tool's volatile arguments left out), so the approval binds to them and a run with any others is
// flagged. Settle stores arguments redacted and never saw the secrets it redacted, so an edit that holds a
// redacted value (a secret the approver could not see) or a value the redaction would change (a secret Settle
// could not hand back) is refused: the runtime must be able to run exactly what was approved.

/** Why these edited arguments cannot be approved, or null. */
export function refuseEditedArguments(args: Record<string, unknown>): string | null {
  const text = stringifyExactJson(args);
  if (Buffer.byteLength(text, "utf8") > ARGUMENTS_MAX_BYTES)
    return `the edited arguments are over ${ARGUMENTS_MAX_BYTES} bytes as JSON.`;
  if (text.includes(REDACTED))
    return `the edited arguments hold ${REDACTED}: Settle never stored the secret it stands for, so it cannot run with it. Approve without edits, or reject with a reply asking the agent to call again.`;
  if (stringifyExactJson(redact(args)) !== text)
    return "the edited arguments hold a secret-looking value, which Settle would redact and so could not hand to the runtime. Leave secrets out of edits.";
  return null;
}

export type PreparedEdit = { digest: string; changes: ArgumentChange[]; beforeDigest: string | null };

const storedArguments = {
  name: "settle_edit_before",
  text: `SELECT arguments FROM attempts
          WHERE runtime_id = $1::uuid AND invocation_uid = $2::uuid AND args_digest = $3 AND arguments IS NOT NULL
          ORDER BY seq DESC LIMIT 1`,
};

const callQuery = {
  name: "settle_edit_call",
  text: `SELECT runtime_id::text, tool FROM invocations
          WHERE invocation_id = $1 AND ($2::uuid IS NULL OR runtime_id = $2::uuid) LIMIT 1`,
};

/**
 * The tool's volatile arguments, read before the action's transaction: the embedded database has one
 * connection, which the transaction holds, so the catalog cannot be read inside it.
 */
export async function volatileArgsOfCall(db: Db, invocationId: string, runtimeId?: string): Promise<string[]> {
  const [call] = await db.driver.query<{ runtime_id: string; tool: string }>(callQuery.text, [
    invocationId,
    runtimeId ?? null,
  ]);
  if (!call) return [];
  return [...volatileArgsFor(await loadToolCatalog(db, call.runtime_id), call.tool)];
}

/**
 * The edit's digest and what it changed against the arguments the approvals so far are for (a pending edit's,
 * else the call's latest); null when the digests are equal (a change of volatile arguments only is no edit).
 */
export async function prepareEdit(
  tx: Tx,
  row: { id: string; runtime_id: string },
  current: FoldSnapshot,
  args: Record<string, unknown>,
  volatileArgs: readonly string[],
): Promise<PreparedEdit | null> {
  const digest = argsDigest(args, volatileArgs);
  const beforeDigest = approvalTargetDigest(current) || null;
  if (digest === beforeDigest) return null;
  let before: unknown = current.pendingEdit?.arguments ?? null;
  if (!current.pendingEdit && beforeDigest) {
    const [stored] = await tx.query<{ arguments: unknown }>(storedArguments, [row.runtime_id, row.id, beforeDigest], {
      exactJson: true,
    });
    before = stored?.arguments ?? null;
  }
  return { digest, changes: diffArguments(before ?? {}, args), beforeDigest };
}
