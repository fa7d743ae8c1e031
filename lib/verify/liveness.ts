import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { listToolCatalog, toolCatalogItemSchema } from "../catalog/catalog";
import { actOnInvocationsQuietly } from "../invocations/act-many";
import {
  NO_VERIFIER_REASON,
  NO_VERIFIER_RUNNING,
  noVerifierNote,
  silenceLimitS,
  unserved,
  verifierRunning,
  VERIFIER_ACTOR,
  type VerifierServing,
  type VerifyConfig,
} from "../outcome/verification";
import { processWide } from "../process-wide";
import {
  recordVerifierPoll,
  selectServing,
  selectUnserved,
  type ServingRow,
  type UnservedRow,
} from "./liveness-queries";
import { updateRequestState } from "./queries";

export { recordVerifierPoll };

// Whether anyone serves a runtime's verifier: a worker that polls (pull), kept per runtime in verifier_polls so
// every instance sees every instance's polls, or an enabled webhook endpoint (push). An ask nobody has served
// for the silence limit (lib/outcome/verification.ts) goes to a person: escalated as settle:verifier through the
// one state machine, its outcome still unknown, the request closed as given up with the reason.

const UNSERVED_BATCH = 1_000;
/** How often one process writes a runtime's poll: a long poll asks every 400 ms, a minute's limit needs far less. */
const RECORD_EVERY_MS = 5_000;
const recordedAt = processWide("verifierPollRecordedAt", () => new Map<string, number>());

/** recordVerifierPoll at most every few seconds per runtime from this process: a waiting worker polls often. */
export async function noteVerifierPoll(db: Db, runtimeId: string, worker: string | null, now: Date): Promise<void> {
  const last = recordedAt.get(runtimeId) ?? 0;
  if (now.getTime() - last < RECORD_EVERY_MS) return;
  recordedAt.set(runtimeId, now.getTime());
  await recordVerifierPoll(db.driver, runtimeId, worker, now);
}

const servingOf = (row: ServingRow | undefined): VerifierServing => ({
  lastPollAt: row?.polled_at ? new Date(row.polled_at) : null,
  push: row?.push ?? false,
});

export const verifierServingSchema = z
  .object({
    running: z
      .boolean()
      .describe(
        "Whether anyone serves this runtime's verifier: a worker asked within two every_s (at least a minute), or an enabled webhook endpoint takes the asks.",
      ),
    push: z.boolean().describe("The runtime has an enabled webhook endpoint: asks go to it."),
    last_poll_at: z.string().nullable().describe("When a worker last asked for this runtime's verifications."),
    worker: z.string().nullable().describe("The name the last polling worker gave."),
  })
  .meta({ id: "VerifierServing" });
export type VerifierServingView = z.infer<typeof verifierServingSchema>;

export function servingView(row: ServingRow | undefined, config: VerifyConfig, now: Date): VerifierServingView {
  const serving = servingOf(row);
  return {
    running: verifierRunning(serving, config, now),
    push: serving.push,
    last_poll_at: serving.lastPollAt?.toISOString() ?? null,
    worker: row?.worker ?? null,
  };
}

export const catalogEntryServedSchema = toolCatalogItemSchema
  .extend({
    serving: verifierServingSchema
      .nullable()
      .describe("For an entry with a verifier: whether anyone serves it now. null: no verifier."),
  })
  .meta({ id: "ToolCatalogEntryServed" });
export type CatalogEntryServed = z.infer<typeof catalogEntryServedSchema>;

/** The catalog (lib/catalog) with, on each entry that has a verifier, whether anyone serves it now. */
export async function listToolCatalogServed(
  db: Db,
  filter: { runtime?: string } = {},
  now: Date = new Date(),
): Promise<CatalogEntryServed[]> {
  const entries = await listToolCatalog(db, filter);
  const withVerifier = entries.filter((e) => e.verify);
  const ids = await db.driver.query<{ id: string; name: string }>(
    `SELECT id::text AS id, name FROM runtimes WHERE name = ANY($1::text[])`,
    [[...new Set(withVerifier.map((e) => e.runtime))]],
  );
  const idOf = new Map(ids.map((r) => [r.name, r.id]));
  const serving = await selectServing(db.driver, [...idOf.values()]);
  return entries.map((e) => ({
    ...e,
    serving: e.verify ? servingView(serving.get(idOf.get(e.runtime) ?? ""), e.verify, now) : null,
  }));
}

// Settle can say nobody asked only for a time it was there to be asked: after Settle itself was down (every
// instance restarted), the silence is counted from this process's first look, not from the last poll before.
const watch = processWide("verifierWatchSince", () => ({ since: null as number | null }));

function watchingSince(now: Date): number {
  watch.since ??= now.getTime();
  // A clock set before the first look (a test's, a replay's) has nothing to wait for.
  return watch.since <= now.getTime() ? watch.since : 0;
}

/**
 * Hands to a person every ask that nobody served for its silence limit: the invocation escalated by
 * settle:verifier (its outcome still unknown, the reason in the audit), the request given up with the reason.
 */
export async function escalateUnserved(db: Db, now: Date): Promise<number> {
  const rows = await selectUnserved(db.driver, now, silenceLimitS({ every_s: 1 }), UNSERVED_BATCH);
  const watching = watchingSince(now);
  const due = rows.filter((r) => {
    const waitingSince = Math.max(new Date(r.due_at).getTime(), new Date(r.created_at).getTime(), watching);
    const serving = servingOf({ ...r, worker: null, push: false });
    return unserved({ waitingSince: new Date(waitingSince), config: r.config }, serving, now);
  });
  const byRuntime = new Map<string, UnservedRow[]>();
  for (const r of due) byRuntime.set(r.runtime_id, [...(byRuntime.get(r.runtime_id) ?? []), r]);
  let handed = 0;
  for (const [runtimeId, asks] of byRuntime) {
    const first = asks[0]!;
    const note = noVerifierNote(first.runtime, first.polled_at ? new Date(first.polled_at) : null);
    const refusals = await actOnInvocationsQuietly(
      db,
      runtimeId,
      asks.map((r) => ({
        invocationId: r.invocation_id,
        version: r.version,
        audit: { verification_id: r.id, reason: NO_VERIFIER_REASON },
      })),
      { action: "escalate", note },
      { actor: VERIFIER_ACTOR, now },
    );
    for (const [i, r] of asks.entries()) {
      // Refused: someone settled or moved it (the review closes the request), or it changed meanwhile (next tick).
      if (refusals[i]) continue;
      const closed = await updateRequestState(db.driver, r, r.state, "gave_up", now, {
        try: r.tries,
        at: now.toISOString(),
        by: VERIFIER_ACTOR,
        via: "settle",
        found: null,
        evidence: note,
        ref: null,
        reading: NO_VERIFIER_RUNNING,
      });
      if (closed) handed += 1;
    }
  }
  return handed;
}
