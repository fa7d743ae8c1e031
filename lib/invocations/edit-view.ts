import type { ArgumentsEdit } from "../outcome/fold";
import type { ArgumentChange } from "./arguments-diff";

// Approve with edits as the read API shows it (read.ts): the edit the stored fold keeps, and what an audit
// entry's payload says of an edit or a reply.

/** The fold's pending edit, else its approved one, as the invocation query selects it (`arguments_edit`). */
export type StoredEdit = ArgumentsEdit & { state: "pending" | "approved" };

export function argumentsEditView(edit: StoredEdit | null | undefined) {
  if (!edit) return null;
  const { state, arguments: args, digest, by, at } = edit;
  return { state, arguments: args, digest, by, at: new Date(at).toISOString() };
}

/** What an audit entry's payload adds for a reader: the reply to the agent, and the members an edit changed. */
export function actionDetails(payload: unknown): { reply?: string; edit?: { changes: ArgumentChange[] } } {
  const p = (payload ?? {}) as { action?: { reply?: unknown }; edit?: { changes?: unknown } };
  return {
    ...(typeof p.action?.reply === "string" ? { reply: p.action.reply } : {}),
    ...(Array.isArray(p.edit?.changes) ? { edit: { changes: p.edit.changes as ArgumentChange[] } } : {}),
  };
}
