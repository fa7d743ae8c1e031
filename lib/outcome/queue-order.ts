import type { StoredStatus } from "./status";
import { OPEN_REVIEW } from "./duplicates";

// The queue's order, as data: which statuses come first, and the order of
// effect classes by risk. The queue query (lib/queue/queue.ts) and the index
// `invocations_queue_order_idx` (migration *_queue_order) are generated from
// here; tests/integration/sql-rules.test.ts checks the index still says the
// same as these constants. No imports with I/O: the console may read it.

/** The five effect classes, riskiest first: the queue's order and every list of them. */
export const effectClasses = ["money", "destructive", "send", "create", "read"] as const;
export type EffectClassName = (typeof effectClasses)[number];

/** The classes the console shows loudest: a wrong second call cannot be taken back. */
export const irreversibleEffectClasses: readonly EffectClassName[] = ["money", "destructive"];

/**
 * Queue tiers, by stored status. A stored `pending` in the queue is always a
 * stalled one (the queue shows pending rows only once their window passed), so
 * it ranks with the headline; everything not listed (settled) comes last.
 */
export const queueTiers: readonly (readonly StoredStatus[])[] = [
  ["outcome_unknown", "pending"],
  ["partially_applied", "awaiting_approval", "verifying", "escalated"],
];

/** The tier of an invocation whose possible duplicate effect waits for review (lib/outcome/duplicates.ts): with what needs a person. */
export const DUPLICATE_REVIEW_TIER = 1;

/** An effect class that is missing or not one of the five is ranked as a write, with `create`. */
export const UNCLASSIFIED_RANK_AS: EffectClassName = "create";

const word = (s: string) => {
  // Only Settle's own constants reach this: never request text.
  if (!/^[a-z_]+$/.test(s)) throw new Error(`not a vocabulary word: ${s}`);
  return `'${s}'`;
};

/** `'a', 'b'` for a SQL IN list of vocabulary constants. */
export function sqlWords(words: readonly string[]): string {
  return words.map(word).join(", ");
}

/**
 * The sort key's expressions for a table alias (`i.`, or "" for the index).
 * The planner matches an index by the expression's form, so the query and the
 * index must come from the same function.
 */
export function queueOrderSql(alias = ""): { tier: string; rank: string; since: string } {
  const col = (c: string) => `${alias}${c}`;
  const tiers = [
    ...queueTiers.map((statuses, i) => `WHEN ${col("status")} IN (${sqlWords(statuses)}) THEN ${i}`),
    // A possible duplicate effect an operator has not reviewed needs a person, whatever its status.
    `WHEN ${col("duplicate_review")} = ${word(OPEN_REVIEW)} THEN ${DUPLICATE_REVIEW_TIER}`,
    // So does a call that ran with other arguments than a person approved, until someone checks what ran.
    `WHEN ${col("args_review")} = ${word(OPEN_REVIEW)} THEN ${DUPLICATE_REVIEW_TIER}`,
  ].join(" ");
  const fallback = effectClasses.indexOf(UNCLASSIFIED_RANK_AS);
  const ranks = effectClasses
    .map((c, i) => (c === UNCLASSIFIED_RANK_AS ? null : `WHEN ${word(c)} THEN ${i}`))
    .filter(Boolean)
    .join(" ");
  return {
    tier: `CASE ${tiers} ELSE ${queueTiers.length} END`,
    rank: `CASE ${col("effect_class")} ${ranks} ELSE ${fallback} END`,
    since: `CASE WHEN ${col("status")} = 'pending' AND ${col("stall_at")} IS NOT NULL THEN ${col("stall_at")} ELSE ${col("status_since")} END`,
  };
}
