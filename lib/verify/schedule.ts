import "server-only";
import type { Db } from "../db/client";
import { loadToolCatalog } from "../catalog/load";
import { likePatternOf, verifyFor } from "../catalog/effect-class";
import { actOnInvocationQuietly } from "../invocations/act";
import { firstAskAt, gaveUpNote, stillAsking } from "../outcome/verification";
import { recordVerifierProbe } from "./probe";
import {
  insertRequests,
  selectCandidates,
  selectRequestsToReview,
  selectRuntimesWithVerifiers,
  updateRequestState,
  type AskedRow,
  type NewRequest,
  type RequestRow,
} from "./queries";

// The verifier's side of the job (decision 027): find unknown calls of tools with a verifier and schedule a
// request; when one is due, move the invocation to `verifying` through the one state machine (so the decision
// API answers `verify` and the audit trail names Settle); close requests whose invocation moved on; and hand
// back to a person what `max_tries` asks could not settle. Every step acts only if the row is still where it
// was seen, so several app instances may run it at once.

export const VERIFIER_ACTOR = "settle:verifier";
const SCHEDULE_BATCH = 5_000;
const REVIEW_BATCH = 1_000;
/** Invocations moved to verifying at once (each its own transaction through the state machine) on PostgreSQL. */
const OPEN_CONCURRENCY = 8;

export type VerificationTick = { scheduled: number; opened: number; cancelled: number; gaveUp: number };

/** Schedules a request for every new unknown of a tool with a verifier, `after_s` after it became unknown. */
export async function scheduleVerifications(db: Db, now: Date, only: string | null = null): Promise<number> {
  let scheduled = 0;
  const runtimes = only ? [only] : await selectRuntimesWithVerifiers(db.driver);
  for (const runtimeId of runtimes) {
    const catalog = await loadToolCatalog(db, runtimeId);
    const patterns = catalog.filter((e) => e.verify).map((e) => likePatternOf(e.pattern));
    if (patterns.length === 0) continue;
    const rows: NewRequest[] = [];
    for (const c of await selectCandidates(db.driver, runtimeId, patterns, now, SCHEDULE_BATCH)) {
      const config = verifyFor(catalog, c.tool);
      if (!config) continue;
      // A stall is unknown from the moment its window passed; an unknown outcome from its status change.
      const since = c.status === "pending" && c.stall_at ? new Date(c.stall_at) : new Date(c.status_since);
      rows.push({
        uid: c.uid,
        attempt: c.attempt_count,
        config,
        dueAt: firstAskAt(since, config),
        firstDispatchedAt: new Date(c.first_seen_at),
      });
    }
    scheduled += await insertRequests(db.driver, runtimeId, rows);
  }
  return scheduled;
}

type Reviewed = RequestRow & AskedRow;

/** The invocation to `verifying`, as Settle, through the one state machine; null when done, else why not. */
const askToVerify = (db: Db, r: Reviewed, now: Date) =>
  actOnInvocationQuietly(
    db,
    { invocationId: r.invocation_id, runtimeId: r.runtime_id },
    {
      action: "request_verification",
      note: `Settle asks ${r.runtime}'s verifier (up to ${r.config.max_tries} tries).`,
    },
    { actor: VERIFIER_ACTOR, version: r.version, now, audit: { verification_id: r.id } },
  );

async function openRequest(db: Db, r: Reviewed, now: Date): Promise<"opened" | "cancelled" | "skipped"> {
  if (r.status === "verifying")
    return (await updateRequestState(db.driver, r, "scheduled", "open", now)) ? "opened" : "skipped";
  const refused = await askToVerify(db, r, now);
  if (!refused) return (await updateRequestState(db.driver, r, "scheduled", "open", now)) ? "opened" : "skipped";
  // Someone settled or moved it first; a version conflict is looked at again next tick.
  if (refused.code === "VERSION_CONFLICT") return "skipped";
  return (await updateRequestState(db.driver, r, "scheduled", "cancelled", now)) ? "cancelled" : "skipped";
}

/**
 * A request a worker (or the push) just took while it was still `scheduled`: its invocation moves to verifying
 * now, by its taker, so nobody else races to do it. False (and the request closed) when it was settled meanwhile.
 */
export async function openTaken(
  db: Db,
  r: Reviewed,
  now: Date,
  current: () => Promise<string | null>,
): Promise<boolean> {
  if (r.status === "verifying") return true;
  const refused = await askToVerify(db, r, now);
  // Refused: the job (or another taker) moved it to verifying first, which is as good; anything else closes it.
  if (!refused || (await current()) === "verifying") return true;
  await updateRequestState(db.driver, r, "open", "cancelled", now);
  return false;
}

/** After `max_tries` asks without a settling answer: a failed probe escalates it to a person, with what was asked. */
async function giveUp(db: Db, r: Reviewed, now: Date): Promise<boolean> {
  const last = r.answers.at(-1);
  const note = gaveUpNote(r.tries, last?.reading ?? "no answer", last?.evidence);
  await recordVerifierProbe(
    db,
    r,
    {
      settle_verification: { id: r.id, try: r.tries, answered_by: VERIFIER_ACTOR, via: "settle" },
      found: null,
      evidence: note,
      ref: null,
    },
    "failed",
    now,
    "gave-up",
  );
  return updateRequestState(db.driver, r, "open", "gave_up", now, {
    try: r.tries,
    at: now.toISOString(),
    by: VERIFIER_ACTOR,
    via: "settle",
    found: null,
    evidence: note,
    ref: null,
    reading: "gave up",
  });
}

/** Opens what is due, closes what a person (or other evidence) settled, gives up on what ran out of tries. */
export async function reviewRequests(
  db: Db,
  now: Date,
  runtimeId: string | null = null,
): Promise<Omit<VerificationTick, "scheduled">> {
  const tick = { opened: 0, cancelled: 0, gaveUp: 0 };
  const review = async (r: Reviewed) => {
    if (r.state === "scheduled") {
      const done = await openRequest(db, r, now);
      if (done === "opened") tick.opened += 1;
      if (done === "cancelled") tick.cancelled += 1;
    } else if (!stillAsking(r.status, r.attempt_count, r.attempt)) {
      if (await updateRequestState(db.driver, r, "open", "cancelled", now)) tick.cancelled += 1;
    } else if (r.status === "verifying" && (await giveUp(db, r, now))) {
      tick.gaveUp += 1;
    }
  };
  const due = await selectRequestsToReview(db.driver, now, runtimeId, REVIEW_BATCH);
  // PGlite runs one query at a time anyway; PostgreSQL takes a few side by side from the pool.
  const width = db.driver.kind === "pglite" ? 1 : OPEN_CONCURRENCY;
  for (let i = 0; i < due.length; i += width) await Promise.all(due.slice(i, i + width).map(review));
  return tick;
}

export async function runVerifications(db: Db, now: Date): Promise<VerificationTick> {
  const scheduled = await scheduleVerifications(db, now);
  return { scheduled, ...(await reviewRequests(db, now)) };
}
