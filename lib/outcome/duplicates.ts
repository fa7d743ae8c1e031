import { standingOf, type GuardCandidate, type Standing } from "./guard-rules";
import type { EffectClassName } from "./queue-order";

// Duplicates the key cannot catch (decision 028): the model mints a new
// idempotency key for a retry, so two invocations of one runtime and tool carry
// the same arguments digest under different keys. Pure: lib/guard refuses the
// second write with these rules, lib/invocations flags a record that arrived
// without a guard, and the queue and the invocation page show the review.

/** Where an operator's review of a possible duplicate stands: open (in the queue), confirmed (noted), dismissed (audited). */
// Zod-free, as status.ts is: the queue's order (queue-order.ts) reads it in the browser. Its schema is
// vocabulary.ts's duplicateReviewSchema.
export const duplicateReviews = ["open", "confirmed", "dismissed"] as const;
export type DuplicateReview = (typeof duplicateReviews)[number];
export const OPEN_REVIEW: DuplicateReview = "open";

/**
 * The audit entries of a review, on the invocation it concerns: Settle's flag, an operator's
 * confirmation or dismissal, and "not a duplicate" on the earlier invocation. They change no status,
 * so the fold passes over them as it does over comments.
 */
export const duplicateActions = [
  "flag_possible_duplicate",
  "confirm_duplicate",
  "dismiss_duplicate",
  "not_duplicate",
] as const;
export type DuplicateAction = (typeof duplicateActions)[number];

/**
 * A person's word that they checked what ran when a call ran with other arguments than were approved
 * (the fold's argsMismatch): like a duplicate review, it takes the call out of the queue and changes no state.
 */
export const CHECK_ARGUMENTS = "check_arguments";

/** The classes whose possible duplicate effect goes to the queue for a person: a second one costs money, sends twice or destroys. */
export const reviewedEffectClasses: readonly EffectClassName[] = ["money", "destructive", "send"];

/** The built-in duplicate window of each class, in seconds; null: off (policies may say otherwise). */
export const builtInDuplicateWindowS: Record<EffectClassName | "*", number | null> = {
  money: 86_400,
  destructive: 86_400,
  send: 3_600,
  create: null,
  read: null,
  "*": null,
};

/** The standings of an earlier invocation that make a new write with its arguments a possible duplicate at the guard. */
const guardBlocking: readonly Standing[] = ["committed", "unknown", "in_flight"];
/** After the fact only an effect that happened, or may have, counts: one still in flight has its own outcome to come. */
const flagging: readonly Standing[] = ["committed", "unknown"];

/** An earlier invocation with the same runtime, tool and digest under another key. */
export type DuplicateCandidate = GuardCandidate & { lastAttemptAt: Date | string };

const strength: Record<Standing, number> = {
  committed: 0,
  unknown: 1,
  in_flight: 2,
  proceeding: 3,
  reopenable: 4,
  closed: 5,
};

/**
 * The earlier invocation a new write would duplicate, among candidates (same
 * runtime, tool and digest, another key, inside the window, not cleared by an
 * operator): the committed first, then unknown, then in flight (at the guard
 * only), the latest of each. Null when none.
 */
export function duplicateOf(
  candidates: readonly DuplicateCandidate[],
  now: Date,
  at: "guard" | "after_the_fact",
): DuplicateCandidate | null {
  const counted = at === "guard" ? guardBlocking : flagging;
  const ranked = candidates
    .map((c) => ({ c, s: standingOf(c, now) }))
    .filter(({ s }) => counted.includes(s))
    .sort(
      (a, b) =>
        strength[a.s] - strength[b.s] || Date.parse(String(b.c.lastAttemptAt)) - Date.parse(String(a.c.lastAttemptAt)),
    );
  return ranked[0]?.c ?? null;
}

/** Whether a flagged invocation of this class waits for a person in the queue. */
export function reviewedInQueue(effectClass: string | null): boolean {
  return (reviewedEffectClasses as readonly string[]).includes(effectClass ?? "");
}
