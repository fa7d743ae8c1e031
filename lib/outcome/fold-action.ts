import { applyAction, type ActionResult } from "./actions";
import type { DerivedInvocation, FoldAction, FoldSnapshot } from "./fold";

// An operator action folded onto an invocation (fold.ts): the state machine's transition, plus what an
// approval binds — the arguments' digest it approved, and the edited arguments when a person changed them.

/** Arguments a person approved in place of the call's own (approve with edits), and who gave them when. */
export type ArgumentsEdit = { digest: string; arguments: Record<string, unknown>; by: string; at: string };

/**
 * What an approval given while the call had no arguments is bound to: none. An empty digest is read as no
 * digest wherever a record carries one, so no record's arguments can equal this, and a later record that
 * carries arguments is flagged like any other change of arguments.
 */
export const NO_ARGUMENTS = "";

/** The digest the approvals so far are for: the pending edit's, else the call's latest arguments'. */
export const approvalTargetDigest = (d: Pick<DerivedInvocation, "pendingEdit" | "argsDigest">): string =>
  d.pendingEdit?.digest ?? d.argsDigest ?? NO_ARGUMENTS;

export function foldAction(d: FoldSnapshot, a: FoldAction): { snapshot: FoldSnapshot; result: ActionResult } {
  const approving = a.action.action === "approve";
  const given = a.action.action === "approve" ? a.action.arguments : undefined;
  const edit: ArgumentsEdit | null =
    given && a.argumentsDigest ? { digest: a.argumentsDigest, arguments: given, by: a.actor, at: a.at } : null;
  // Approvals add up only for the same arguments: an edit to others starts the count again with its own.
  const restart = edit !== null && edit.digest !== approvalTargetDigest(d) && d.approvals.length > 0;
  const result = applyAction(restart ? { ...d, approvals: [] } : d, a.action, {
    actor: a.actor,
    at: a.at,
    quorum: a.quorum,
  });
  if (!result.ok) return { snapshot: { ...d, cursor: { ...d.cursor, last: null } }, result };
  const state = result.state;
  const target = approving ? (edit ?? d.pendingEdit) : null;
  const approved = approving && state.status === "approved";
  const approvedDigest = approved ? (target?.digest ?? d.argsDigest ?? NO_ARGUMENTS) : d.approvedDigest;
  const approvedEdit = approved ? target : d.approvedEdit;
  const pendingEdit = state.status === "awaiting_approval" ? (approving ? target : d.pendingEdit) : null;
  return {
    snapshot: { ...d, ...state, approvedDigest, approvedEdit, pendingEdit, cursor: { ...d.cursor, last: null } },
    result,
  };
}
