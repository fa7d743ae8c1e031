import "server-only";
import type { Db } from "../db/client";
import { loadToolCatalog } from "../catalog/load";
import { likePatternOf, verifyFor } from "../catalog/effect-class";
import { actOnInvocation } from "../invocations/act";
import { firstAskAt, gaveUpNote } from "../outcome/verification";
import { recordVerifierProbe } from "./probe";
import {
  insertRequest,
  selectCandidates,
  selectRequestsToReview,
  selectRuntimesWithVerifiers,
  updateRequestState,
  type AskedRow,
  type RequestRow,
} from "./queries";

// The verifier's side of the job (decision 027): find unknown calls of tools with a verifier and schedule a
// request; when one is due, move the invocation to `verifying` through the one state machine (so the decision
// API answers `verify` and the audit trail names Settle); close requests whose invocation moved on; and hand
// back to a person what `max_tries` asks could not settle. Every step acts only if the row is still where it
// was seen, so several app instances may run it at once.

export const VERIFIER_ACTOR = "settle:verifier";
const BATCH = 200;

export type VerificationTick = { scheduled: number; opened: number; cancelled: number; gaveUp: number };

/** Schedules a request for every new unknown of a tool with a verifier, `after_s` after it became unknown. */
export async function scheduleVerifications(db: Db, now: Date): Promise<number> {
  let scheduled = 0;
  for (const runtimeId of await selectRuntimesWithVerifiers(db.driver)) {
    const catalog = await loadToolCatalog(db, runtimeId);
    const patterns = catalog.filter((e) => e.verify).map((e) => likePatternOf(e.pattern));
    if (patterns.length === 0) continue;
    for (const c of await selectCandidates(db.driver, runtimeId, patterns, now, BATCH)) {
      const config = verifyFor(catalog, c.tool);
      if (!config) continue;
      // A stall is unknown from the moment its window passed; an unknown outcome from its status change.
      const since = c.status === "pending" && c.stall_at ? new Date(c.stall_at) : new Date(c.status_since);
      await insertRequest(db.driver, {
        runtimeId,
        uid: c.uid,
        attempt: c.attempt_count,
        config,
        dueAt: firstAskAt(since, config),
        firstDispatchedAt: new Date(c.first_seen_at),
      });
      scheduled += 1;
    }
  }
  return scheduled;
}

type Reviewed = RequestRow & AskedRow;

async function openRequest(db: Db, r: Reviewed, now: Date): Promise<"opened" | "cancelled" | "skipped"> {
  if (r.status === "verifying")
    return (await updateRequestState(db.driver, r, "scheduled", "open", now)) ? "opened" : "skipped";
  const acted = await actOnInvocation(
    db,
    { invocationId: r.invocation_id, runtimeId: r.runtime_id },
    {
      action: "request_verification",
      note: `Settle asks ${r.runtime}'s verifier (up to ${r.config.max_tries} tries).`,
    },
    { actor: VERIFIER_ACTOR, version: r.version, now, audit: { verification_id: r.id } },
  );
  if (acted.ok) return (await updateRequestState(db.driver, r, "scheduled", "open", now)) ? "opened" : "skipped";
  // Someone settled or moved it first; a version conflict is looked at again next tick.
  if (acted.code === "VERSION_CONFLICT") return "skipped";
  return (await updateRequestState(db.driver, r, "scheduled", "cancelled", now)) ? "cancelled" : "skipped";
}

/** After `max_tries` asks without a settling answer: a failed probe escalates it to a person, with what was asked. */
async function giveUp(db: Db, r: Reviewed, now: Date): Promise<boolean> {
  const last = r.answers.at(-1);
  const note = gaveUpNote(r.tries, last?.reading ?? "no answer", last?.evidence);
  await recordVerifierProbe(
    db,
    {
      runtimeId: r.runtime_id,
      runtime: r.runtime,
      invocationId: r.invocation_id,
      taskId: r.task_id,
      tool: r.tool,
      effectClass: r.effect_class,
      idempotencyKey: r.idempotency_key,
      attempt: r.attempt,
    },
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
  for (const r of await selectRequestsToReview(db.driver, now, runtimeId, BATCH)) {
    if (r.state === "scheduled") {
      const done = await openRequest(db, r, now);
      if (done === "opened") tick.opened += 1;
      if (done === "cancelled") tick.cancelled += 1;
    } else if (r.status !== "verifying") {
      if (await updateRequestState(db.driver, r, "open", "cancelled", now)) tick.cancelled += 1;
    } else if (await giveUp(db, r, now)) {
      tick.gaveUp += 1;
    }
  }
  return tick;
}

export async function runVerifications(db: Db, now: Date): Promise<VerificationTick> {
  const scheduled = await scheduleVerifications(db, now);
  return { scheduled, ...(await reviewRequests(db, now)) };
}
