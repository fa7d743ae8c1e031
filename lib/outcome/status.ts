// Zod-free: the console ships this module (and transitions.ts, which imports it) to the browser;
// the schema of a status is vocabulary.ts's invocationStatusSchema.

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
export type InvocationStatus = (typeof invocationStatuses)[number];

/** `stalled` is never stored: it is `pending` whose stall window has passed, computed at read time. */
export type StoredStatus = Exclude<InvocationStatus, "stalled">;

/** docs/outcome-model.md §4 "in the queue": everything that needs a person. */
export const queueStatuses: readonly InvocationStatus[] = [
  "stalled",
  "outcome_unknown",
  "partially_applied",
  "awaiting_approval",
  "verifying",
  "escalated",
];

/**
 * Unsettled: the outcome is (or may be) unknown and evidence or a person must settle it. The guard
 * treats these as "outcome unknown", a person may record a verification or reconcile from them, and
 * the timeline draws the wait in them.
 */
export const unsettledStatuses: readonly InvocationStatus[] = [
  "outcome_unknown",
  "stalled",
  "partially_applied",
  "verifying",
  "escalated",
];

/** Unsettled statuses as stored (`stalled` is a pending row past its stall time, so it is not among them). */
export const unsettledStoredStatuses: readonly StoredStatus[] = unsettledStatuses.filter(
  (s): s is StoredStatus => s !== "stalled",
);

/**
 * Closed: the invocation is over and nothing in it waits for evidence or a person. Only a closed invocation's
 * history leaves with retention (lib/retention/rules.ts); every other status keeps it, however old.
 */
export const closedStatuses: readonly StoredStatus[] = ["succeeded", "failed", "rejected", "reconciled"];

export function isUnsettled(status: InvocationStatus): boolean {
  return unsettledStatuses.includes(status);
}

export function effectiveStatus(status: StoredStatus, stallAt: Date | string | null, now: Date): InvocationStatus {
  if (status !== "pending" || stallAt === null) return status;
  return new Date(stallAt).getTime() <= now.getTime() ? "stalled" : "pending";
}

// effectiveStatus in SQL, for the readers that filter by status (queue, invocation list, queue samples,
// metrics): `col` prefixes the columns ("i."), `now` is the SQL for the moment (a bound parameter).
export const stalledSql = (col: string, now: string) => `(${col}status = 'pending' AND ${col}stall_at <= ${now})`;

/** The stored statuses behind effective ones: `stalled` is stored as `pending`. */
export function storedStatusesOf(statuses: readonly InvocationStatus[]): StoredStatus[] {
  return [...new Set(statuses.map((s) => (s === "stalled" ? "pending" : s)))];
}

/**
 * A filter on effective statuses: the stored list first, so PostgreSQL can use its status index,
 * then the stall_at test where only one of pending and stalled is wanted. `param` binds the list;
 * `now` is asked for only when the test needs it (PostgreSQL refuses a parameter no statement uses).
 */
export function statusFilterSql(
  statuses: readonly InvocationStatus[],
  col: string,
  now: () => string,
  param: (value: unknown) => string,
): string {
  const conditions = [`${col}status = ANY(${param(storedStatusesOf(statuses))}::text[])`];
  const stalled = statuses.includes("stalled");
  const pending = statuses.includes("pending");
  if (stalled && !pending) conditions.push(`(${col}status <> 'pending' OR ${col}stall_at <= ${now()})`);
  if (pending && !stalled)
    conditions.push(`(${col}status <> 'pending' OR ${col}stall_at IS NULL OR ${col}stall_at > ${now()})`);
  return conditions.join(" AND ");
}
