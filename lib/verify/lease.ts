import "server-only";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { Db } from "../db/client";
import { effectClassSchema } from "../outcome/vocabulary";
import { processWide } from "../process-wide";
import { noteVerifierPoll } from "./liveness";
import { openTaken, scheduleVerifications } from "./schedule";
import { leaseRequests, selectAsked, type AskedRow, type RequestRow } from "./queries";

// A verifier worker asks for work (GET /api/v1/verifications?wait=N): its runtime's due requests, each leased
// to it for the entry's `lease_s` and counted as a try. The lease is taken with FOR UPDATE SKIP LOCKED, so two
// workers polling at once never get the same request. A poll also schedules the runtime's new unknowns (at most
// once a second) and opens what it takes, so a waiting worker gets an ask the moment it is due, not at the
// next job tick.

export const MAX_WAIT_S = 60;
const POLL_MS = 400;
const GATHER_MS = 250;
export const LEASE_BATCH = 20;

export const verificationsQuerySchema = z.object({
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_S)
    .default(0)
    .describe("Hold the request up to N seconds (0–60) until there is work."),
  limit: z.coerce.number().int().min(1).max(LEASE_BATCH).default(10).describe("At most this many items (1–20)."),
  worker: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe("A name for this worker, kept with its leases and answers."),
});
export type VerificationsQuery = z.infer<typeof verificationsQuerySchema>;

export const verificationItemSchema = z
  .object({
    id: z.string().describe("The request's id: answer it at POST /api/v1/verifications/{id}."),
    invocation_id: z.string(),
    task_id: z.string(),
    tool: z.string(),
    effect_class: effectClassSchema.nullable(),
    idempotency_key: z.string().nullable(),
    arguments: z.record(z.string(), z.unknown()).nullable().describe("The call's latest arguments, secrets redacted."),
    first_dispatched_at: z
      .string()
      .describe("When the call was first seen: “not found” counts only once it is absent_after_s old."),
    try: z.number().int().describe("This ask's number, from 1."),
    max_tries: z.number().int(),
    lease_expires_at: z.string().describe("Answer before this, or the request may go to another worker."),
  })
  .meta({ id: "VerificationItem" });
export type VerificationItem = z.infer<typeof verificationItemSchema>;

export const verificationItemsSchema = z
  .object({ items: z.array(verificationItemSchema) })
  .meta({ id: "VerificationItems" });

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function itemOf(r: RequestRow, inv: AskedRow & { first_arguments: unknown }): VerificationItem {
  return {
    id: r.id,
    invocation_id: inv.invocation_id,
    task_id: inv.task_id,
    tool: inv.tool,
    effect_class: (inv.effect_class as VerificationItem["effect_class"]) ?? null,
    idempotency_key: inv.idempotency_key,
    arguments: (inv.first_arguments as Record<string, unknown> | null) ?? null,
    first_dispatched_at: iso(r.first_dispatched_at)!,
    try: r.tries,
    max_tries: r.config.max_tries,
    lease_expires_at: iso(r.leased_until)!,
  };
}

/**
 * Takes up to `limit` due requests of one runtime for `worker` (a pulling worker, or the push), opens the ones
 * that were still scheduled, and answers what the worker needs to look each effect up.
 */
export async function takeRequests(
  db: Db,
  runtimeId: string,
  worker: string,
  now: Date,
  limit: number,
): Promise<Array<{ request: RequestRow; item: VerificationItem }>> {
  const leased = await leaseRequests(db.driver, runtimeId, worker, now, limit);
  const asked = await selectAsked(
    db.driver,
    leased.map((r) => r.invocation_uid),
  );
  const withInvocation = leased.flatMap((r) => {
    const inv = asked.get(r.invocation_uid);
    return inv ? [{ ...r, ...inv }] : [];
  });
  // Whoever took them opens them if nobody has yet (also a request whose earlier taker stopped before opening it).
  const statusOf = async (uids: string[]) =>
    new Map([...(await selectAsked(db.driver, uids))].map(([uid, inv]) => [uid, inv.status]));
  const opened = await openTaken(db, withInvocation, now, statusOf);
  return opened.map((r) => ({ request: r as RequestRow, item: itemOf(r, asked.get(r.invocation_uid)!) }));
}

// When this process last scheduled each runtime's new unknowns from a worker's poll (at most once a second, so
// a waiting worker gets an ask after_s after the unknown, not after the next job tick too).
const scheduledAt = processWide("verifierScheduledAt", () => new Map<string, number>());
const SCHEDULE_EVERY_MS = 1_000;

async function leaseOnce(db: Db, runtime: { id: string }, worker: string, limit: number): Promise<VerificationItem[]> {
  const now = new Date();
  // Every ask, a waiting one too, says a worker is running (lib/verify/liveness.ts).
  await noteVerifierPoll(db, runtime.id, worker, now);
  if (now.getTime() - (scheduledAt.get(runtime.id) ?? 0) >= SCHEDULE_EVERY_MS) {
    scheduledAt.set(runtime.id, now.getTime());
    await scheduleVerifications(db, now, runtime.id);
  }
  return (await takeRequests(db, runtime.id, worker, now, limit)).map((t) => t.item);
}

/** Leases due requests of the caller's runtime; with `wait`, polls until there is one or the wait runs out. */
export async function leaseVerifications(
  db: Db,
  runtime: { id: string },
  worker: string,
  query: VerificationsQuery,
  signal?: AbortSignal,
): Promise<{ items: VerificationItem[] }> {
  const deadline = Date.now() + query.wait * 1000;
  for (;;) {
    const items = await leaseOnce(db, runtime, worker, query.limit);
    if (items.length > 0) return { items: await gather(db, runtime, worker, query, items, deadline, signal) };
    if (Date.now() >= deadline || signal?.aborted) return { items };
    try {
      await sleep(Math.min(POLL_MS, deadline - Date.now()), undefined, { signal });
    } catch {
      return { items: [] };
    }
  }
}

/**
 * A worker that waits (wait > 0) gets the asks coming due within GATHER_MS of its first one in the same answer:
 * at a steady trickle of unknowns that is one poll, one transaction and one batch of answers for several asks
 * instead of one each, for at most GATHER_MS more on the first (the latency target leaves seconds).
 */
async function gather(
  db: Db,
  runtime: { id: string },
  worker: string,
  query: VerificationsQuery,
  items: VerificationItem[],
  deadline: number,
  signal?: AbortSignal,
): Promise<VerificationItem[]> {
  const room = query.limit - items.length;
  const pause = Math.min(GATHER_MS, deadline - Date.now());
  if (query.wait === 0 || room <= 0 || pause <= 0) return items;
  try {
    await sleep(pause, undefined, { signal });
  } catch {
    return items;
  }
  return [...items, ...(await leaseOnce(db, runtime, worker, room))];
}
