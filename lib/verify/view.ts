import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { verificationStates, verifyConfigSchema } from "../outcome/verification";
import { loadToolCatalog } from "../catalog/load";
import { verifyFor } from "../catalog/effect-class";
import { servingView, verifierServingSchema } from "./liveness";
import { selectServing } from "./liveness-queries";
import { selectInvocationTool, selectRequestOf } from "./queries";

// Where Settle's asking stands for one invocation, for its page ("Settle is checking: try 2 of 5, next at …").

const time = z.string().describe("ISO 8601");

export const verificationViewSchema = z
  .object({
    id: z.string(),
    runtime: z.string(),
    state: z.enum(verificationStates),
    try: z.number().int().describe("Asks so far."),
    max_tries: z.number().int(),
    next_ask_at: time.nullable().describe("While open or scheduled: when Settle asks (again)."),
    leased_until: time.nullable().describe("While a worker is looking it up: until when it holds the request."),
    leased_by: z.string().nullable(),
    first_dispatched_at: time,
    config: verifyConfigSchema,
    serving: verifierServingSchema.describe(
      "Whether anyone serves the runtime's verifier now: with nobody, an ask that waits two every_s (at least a minute) goes to a person.",
    ),
    answers: z.array(
      z.object({
        try: z.number().int(),
        at: time,
        by: z.string(),
        via: z.enum(["api", "webhook", "settle"]),
        found: z.boolean().nullable(),
        evidence: z.string().nullable(),
        ref: z.string().nullable(),
        reading: z.string().describe("What Settle made of it: found, absent, gave up, or why it asks again."),
      }),
    ),
  })
  .meta({ id: "Verification" });
export type VerificationView = z.infer<typeof verificationViewSchema>;

// A call Settle never asked about is an ordinary answer, not a missing resource: its page asks every 2 s.
export const noVerificationSchema = z
  .object({
    state: z.literal("none"),
    verifier: z.boolean().describe("Whether the runtime's tool catalog gives this call's tool a verifier."),
    note: z.string(),
  })
  .meta({ id: "NoVerification" });
export type NoVerification = z.infer<typeof noVerificationSchema>;

const noVerification = (verifier: boolean): NoVerification => ({
  state: "none",
  verifier,
  note: verifier
    ? "Settle has not asked a verifier about this call: it asks only once an outcome is unknown."
    : "This call's tool has no verifier in the runtime's tool catalog.",
});

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export async function getVerification(
  db: Db,
  scope: { runtimeId?: string },
  invocationId: string,
  runtime?: string,
  now: Date = new Date(),
): Promise<VerificationView | NoVerification | null> {
  const r = await selectRequestOf(db.driver, invocationId, { ...scope, runtime });
  if (!r) {
    const call = await selectInvocationTool(db.driver, invocationId, { ...scope, runtime });
    if (!call) return null;
    return noVerification(verifyFor(await loadToolCatalog(db, call.runtime_id), call.tool) !== null);
  }
  const open = r.state === "open" || r.state === "scheduled";
  const serving = (await selectServing(db.driver, [r.runtime_id])).get(r.runtime_id);
  const leased = r.leased_until && new Date(r.leased_until) > now ? r.leased_until : null;
  return {
    id: r.id,
    runtime: r.runtime,
    state: r.state as VerificationView["state"],
    try: r.tries,
    max_tries: r.config.max_tries,
    next_ask_at: open ? iso(r.due_at) : null,
    leased_until: open ? iso(leased) : null,
    leased_by: open && leased ? r.leased_by : null,
    first_dispatched_at: iso(r.first_dispatched_at)!,
    config: r.config,
    serving: servingView(serving, r.config, now),
    answers: r.answers,
  };
}
