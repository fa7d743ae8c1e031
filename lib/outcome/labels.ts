import type { InvocationStatus } from "./status";

// The words a person reads for each status: the console's badges and the notifications say the same.

export const statusLabels: Record<InvocationStatus, string> = {
  outcome_unknown: "Outcome unknown",
  stalled: "Stalled",
  partially_applied: "Partially applied",
  awaiting_approval: "Awaiting approval",
  verifying: "Verifying",
  escalated: "Escalated",
  needs_input: "Needs input",
  retry_scheduled: "Retry scheduled",
  pending: "Pending",
  succeeded: "Succeeded",
  failed: "Failed",
  approved: "Approved",
  rejected: "Rejected",
  reconciled: "Reconciled",
};
