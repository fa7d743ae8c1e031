import { z } from "zod";

export const invocationStatuses = [
  "pending",
  "stalled",
  "outcome_unknown",
  "partially_applied",
  "awaiting_approval",
  "verifying",
  "escalated",
  "needs_input",
  "retry_scheduled",
  "succeeded",
  "failed",
  "approved",
  "rejected",
  "reconciled",
] as const;
export const invocationStatusSchema = z.enum(invocationStatuses);
export type InvocationStatus = z.infer<typeof invocationStatusSchema>;

/** `stalled` is never stored: it is `pending` whose stall window has passed, computed at read time. */
export type StoredStatus = Exclude<InvocationStatus, "stalled">;

/** SPEC §4 "in the queue": everything that needs a person. */
export const queueStatuses: readonly InvocationStatus[] = [
  "stalled",
  "outcome_unknown",
  "partially_applied",
  "awaiting_approval",
  "verifying",
  "escalated",
];

export function effectiveStatus(status: StoredStatus, stallAt: Date | string | null, now: Date): InvocationStatus {
  if (status !== "pending" || stallAt === null) return status;
  return new Date(stallAt).getTime() <= now.getTime() ? "stalled" : "pending";
}
