// The queue's filter vocabulary, free of server code and of zod, so the
// console can use it without shipping either to the browser.

import { effectClasses } from "../outcome/queue-order";

export { effectClasses };
/** Filter value for an effect class that is missing or not one of the five (treated as a write). */
export const UNCLASSIFIED = "unclassified";
export const ageOptions = ["15m", "1h", "4h", "1d", "7d"] as const;
/** "Select all matching this filter" selects at most this many, in queue order. */
export const QUEUE_IDS_LIMIT = 5_000;
/**
 * The queue counts at most this many matches, then says "more than" (like
 * "1,000+ results"). A count reads every matching row, and a broad search
 * ("inv-1": 111,000 of 250,000) has no index to narrow it: uncapped, the
 * count alone took 70–110 ms of PostgreSQL.
 */
export const QUEUE_COUNT_LIMIT = 10_000;
/** Targets per bulk-action request. */
export const BULK_MAX_TARGETS = 100;
/** URL parameters that make up a queue view (saved views keep only these). */
export const queueFilterKeys = ["status", "tool", "runtime", "effect_class", "assignee", "age", "q"] as const;
export type QueueFilterKey = (typeof queueFilterKeys)[number];
