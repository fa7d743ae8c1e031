import { unsettledStatuses, type InvocationStatus } from "./status";

// docs/outcome-model.md §4's table of operator actions: from which (effective) statuses each is
// allowed. Kept free of zod so the console can ship it to the browser to show
// only the actions the state allows; the server decides again in actions.ts.

export const actionNames = [
  "approve",
  "reject",
  "request_verification",
  "record_verification",
  "mark_reconciled",
  "escalate",
  "assign",
  "unassign",
  "comment",
] as const;
export type ActionName = (typeof actionNames)[number];

/** `null` = allowed from any status. */
export const allowedFrom: Record<ActionName, readonly InvocationStatus[] | null> = {
  approve: ["awaiting_approval"],
  reject: ["awaiting_approval"],
  // Not from verifying: it is already asked.
  request_verification: unsettledStatuses.filter((s) => s !== "verifying"),
  record_verification: unsettledStatuses,
  mark_reconciled: unsettledStatuses,
  // Not from escalated (it is already); from awaiting_approval too (a person must decide the approval).
  escalate: [...unsettledStatuses.filter((s) => s !== "escalated"), "awaiting_approval"],
  assign: null,
  unassign: null,
  comment: null,
};
