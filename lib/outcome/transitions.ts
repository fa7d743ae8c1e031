import type { InvocationStatus } from "./status";

// SPEC §4's table of operator actions: from which (effective) statuses each is
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

const unsettled: InvocationStatus[] = ["outcome_unknown", "stalled", "partially_applied", "verifying", "escalated"];

/** `null` = allowed from any status. */
export const allowedFrom: Record<ActionName, readonly InvocationStatus[] | null> = {
  approve: ["awaiting_approval"],
  reject: ["awaiting_approval"],
  request_verification: ["outcome_unknown", "stalled", "partially_applied", "escalated"],
  record_verification: unsettled,
  mark_reconciled: unsettled,
  escalate: ["outcome_unknown", "stalled", "partially_applied", "awaiting_approval", "verifying"],
  assign: null,
  unassign: null,
  comment: null,
};
