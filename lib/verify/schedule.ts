import "server-only";
import type { Db } from "../db/client";
import { loadToolCatalog } from "../catalog/load";
import { verifyFor } from "../catalog/effect-class";
import type { ActRefusal } from "../invocations/act";
import { actOnInvocationsQuietly } from "../invocations/act-many";
import { firstAskAt, gaveUpNote, stillAsking, VERIFIER_ACTOR } from "../outcome/verification";
import { escalateUnserved } from "./liveness";
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

export { VERIFIER_ACTOR };
const SCHEDULE_BATCH = 5_000;
const REVIEW_BATCH = 1_000;
/** Requests closed or given up at once (each its own statements) on PostgreSQL. */
const REVIEW_CONCURRENCY = 8;

export type VerificationTick = {
  scheduled: number;
  opened: number;
  cancelled: number;
  gaveUp: number;
  /** Handed to a person because nobody serves the runtime's verifier (lib/verify/liveness.ts). */
  unserved: number;
};

/** Schedules a request for every new unknown of a tool with a verifier, `after_s` after it became unknown. */
export async function scheduleVerifications(db: Db, now: Date, only: string | null = null): Promise<number> {
  let scheduled = 0;
  const runtimes = only ? [only] : await selectRuntimesWithVerifiers(db.driver);
  for (const runtimeId of runtimes) {
    const catalog = await loadToolCatalog(db, runtimeId);
    const patterns = catalog.filter((e) => e.verify).map((e) => e.pattern);
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
    scheduled += await insertRequests(db.driver, runtimeId, rows, now);
  }
  return scheduled;
}

type Reviewed = RequestRow & AskedRow;

/**
 * The requests' invocations to `verifying`, as Settle, through the one state machine, one transaction per
 * runtime and entry settings: per request, in order, null when done, else why not.
 */
async function askToVerify(db: Db, rows: readonly Reviewed[], now: Date): Promise<Array<ActRefusal | null>> {
  const out: Array<ActRefusal | null> = new Array(rows.length).fill(null);
  const groups = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const group = `${r.runtime_id}/${r.config.max_tries}`;
    groups.set(group, [...(groups.get(group) ?? []), i]);
  });
  for (const indexes of groups.values()) {
    const first = rows[indexes[0]!]!;
    const refusals = await actOnInvocationsQuietly(
      db,
      first.runtime_id,
      indexes.map((i) => ({
        invocationId: rows[i]!.invocation_id,
        version: rows[i]!.version,
        audit: { verification_id: rows[i]!.id },
      })),
      {
        action: "request_verification",
        note: `Settle asks ${first.runtime}'s verifier (up to ${first.config.max_tries} tries).`,
      },
      { actor: VERIFIER_ACTOR, now },
    );
    indexes.forEach((i, k) => (out[i] = refusals[k] ?? null));
  }
  return out;
}

/** Due scheduled requests: opened (the invocation now verifying), else closed when someone settled it first. */
async function openRequests(db: Db, due: readonly Reviewed[], now: Date, tick: { opened: number; cancelled: number }) {
  const toAsk = due.filter((r) => r.status !== "verifying");
  const refusals = await askToVerify(db, toAsk, now);
  const refused = new Map(toAsk.map((r, i) => [r.id, refusals[i]]));
  for (const r of due) {
    const why = refused.get(r.id);
    // A version conflict is looked at again next tick.
    if (why?.code === "VERSION_CONFLICT") continue;
    const to = why ? "cancelled" : "open";
    if (await updateRequestState(db.driver, r, "scheduled", to, now)) tick[to === "open" ? "opened" : "cancelled"] += 1;
  }
}

/**
 * Requests a worker (or the push) just took while still `scheduled`: their invocations move to verifying now, by
 * their taker, so nobody else races to do it. The ones settled meanwhile are closed and left out.
 */
export async function openTaken(
  db: Db,
  taken: readonly Reviewed[],
  now: Date,
  statusOf: (uids: string[]) => Promise<Map<string, string>>,
): Promise<Reviewed[]> {
  const toAsk = taken.filter((r) => r.status !== "verifying");
  const refusals = await askToVerify(db, toAsk, now);
  const refused = toAsk.filter((_, i) => refusals[i] !== null);
  if (refused.length === 0) return [...taken];
  // Refused: the job (or another taker) moved it to verifying first, which is as good; anything else closes it.
  const statuses = await statusOf(refused.map((r) => r.invocation_uid));
  const dropped = new Set<string>();
  for (const r of refused) {
    if (statuses.get(r.invocation_uid) === "verifying") continue;
    dropped.add(r.id);
    await updateRequestState(db.driver, r, "open", "cancelled", now);
  }
  return taken.filter((r) => !dropped.has(r.id));
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
): Promise<Omit<VerificationTick, "scheduled" | "unserved">> {
  const tick = { opened: 0, cancelled: 0, gaveUp: 0 };
  const due = await selectRequestsToReview(db.driver, now, runtimeId, REVIEW_BATCH);
  await openRequests(
    db,
    due.filter((r) => r.state === "scheduled"),
    now,
    tick,
  );
  const review = async (r: Reviewed) => {
    if (!stillAsking(r.status, r.attempt_count, r.attempt)) {
      if (await updateRequestState(db.driver, r, "open", "cancelled", now)) tick.cancelled += 1;
    } else if (r.status === "verifying" && (await giveUp(db, r, now))) {
      tick.gaveUp += 1;
    }
  };
  const open = due.filter((r) => r.state !== "scheduled");
  // PGlite runs one query at a time anyway; PostgreSQL takes a few side by side from the pool.
  const width = db.driver.kind === "pglite" ? 1 : REVIEW_CONCURRENCY;
  for (let i = 0; i < open.length; i += width) await Promise.all(open.slice(i, i + width).map(review));
  return tick;
}

export async function runVerifications(db: Db, now: Date): Promise<VerificationTick> {
  const scheduled = await scheduleVerifications(db, now);
  const reviewed = await reviewRequests(db, now);
  return { scheduled, ...reviewed, unserved: await escalateUnserved(db, now) };
}
