import type { InvocationSummary } from "./read";
import { queueStatuses } from "../outcome/status";

// Which of a task's invocations the task page lists first: those that need a
// person (the queue's statuses), then the latest. Shared by the server's first
// page and the client's later ones, so "Show more" continues the same order.

export const TASK_PAGE_SIZE = 50;

type Ranked = Pick<InvocationSummary, "status" | "last_attempt_at" | "invocation_id">;

const inQueue = (s: Ranked) => (queueStatuses.includes(s.status) ? 0 : 1);

export function compareRelevance(a: Ranked, b: Ranked): number {
  return (
    inQueue(a) - inQueue(b) ||
    (a.last_attempt_at < b.last_attempt_at ? 1 : a.last_attempt_at > b.last_attempt_at ? -1 : 0) ||
    a.invocation_id.localeCompare(b.invocation_id)
  );
}

export function countNeedingPerson(summaries: Ranked[]): number {
  return summaries.filter((s) => queueStatuses.includes(s.status)).length;
}
