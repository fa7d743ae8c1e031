import { z } from "zod";
import { storedStatusesOf, type InvocationStatus, type StoredStatus } from "./status";
import type { ProbeResult } from "./vocabulary";

// Verifiers (decision 027): when a call of a tool whose catalog entry has `verify` becomes unknown, Settle asks
// the runtime to look the effect up, and reads its answer as a probe. The rules of that conversation, pure: what
// starts it, when to ask, what an answer settles, when to stop asking. lib/verify does the I/O.

const DAY_S = 86_400;
const seconds = (what: string) => z.number().int().min(1).max(DAY_S).describe(`${what} (1 s – 1 day).`);

export const verifyConfigSchema = z
  .object({
    after_s: seconds("How long after the call became unknown Settle first asks"),
    every_s: seconds("How long Settle waits to ask again after an answer that settles nothing"),
    max_tries: z.number().int().min(1).max(100).describe("How many times Settle asks before a person decides (1–100)."),
    absent_after_s: seconds(
      "How old the first dispatch must be before “not found” counts as not committed (a read just after a write can miss it)",
    ),
    lease_s: seconds("How long one worker holds a request before another may take it"),
  })
  .strict()
  .meta({ id: "VerifyConfig" });
export type VerifyConfig = z.infer<typeof verifyConfigSchema>;

/** Where a new verifier's settings start (the console's editor, the CLI's `--verify on`): values that suit a payment API. */
export const suggestedVerifyConfig: VerifyConfig = {
  after_s: 30,
  every_s: 60,
  max_tries: 5,
  absent_after_s: 120,
  lease_s: 30,
};

export function describeVerify(v: VerifyConfig | null): string {
  if (!v) return "off";
  return `after ${v.after_s} s, every ${v.every_s} s, ${v.max_tries} ${v.max_tries === 1 ? "try" : "tries"}`;
}

/** The statuses that start a verification: nobody knows whether the effect happened. */
export const verifiableStatuses: readonly InvocationStatus[] = ["outcome_unknown", "stalled"];

/**
 * The stored statuses in which a request is still being asked: verifying, or still unknown because its taker
 * has not moved it to verifying yet. Anything else means someone settled or moved it, and the request closes.
 */
export const askingStoredStatuses: readonly StoredStatus[] = ["verifying", ...storedStatusesOf(verifiableStatuses)];

/** Whether a request about `attempt` is still wanted for an invocation now at this stored status and attempt. */
export const stillAsking = (status: string, attemptCount: number, attempt: number): boolean =>
  (askingStoredStatuses as readonly string[]).includes(status) && attemptCount === attempt;

/** Where a verification request stands. Open ones are in `openVerificationStates`. */
export const verificationStates = ["scheduled", "open", "settled", "gave_up", "cancelled"] as const;
export type VerificationState = (typeof verificationStates)[number];
export const openVerificationStates: readonly VerificationState[] = ["scheduled", "open"];

export const findingSchema = z
  .object({
    found: z
      .boolean()
      .nullable()
      .describe("true: the effect exists; false: it does not; null: the lookup could not tell (Settle asks again)."),
    evidence: z.string().max(4096).nullish().describe("What the lookup saw, as text (at most 4 KiB)."),
    ref: z.string().max(256).nullish().describe("The effect's id in the other system, e.g. re_123."),
  })
  .strict()
  .meta({ id: "VerificationFinding" });
export type Finding = z.infer<typeof findingSchema>;

/** What Settle does with one answer (or with none, `finding` null). */
export type FindingReading =
  | { kind: "settle"; probe: Exclude<ProbeResult, "failed"> }
  | { kind: "ask_again"; dueAt: Date; why: string }
  | { kind: "give_up"; why: string };

export type AskingState = { tries: number; firstDispatchedAt: Date; config: VerifyConfig };

const addS = (at: Date, s: number) => new Date(at.getTime() + s * 1000);

/**
 * found → committed. Not found → not committed only once the first dispatch is `absent_after_s` old; earlier it
 * is asked again when it will be. No answer, an unclear one or an error → asked again `every_s` later, until
 * `max_tries` asks have had no settling answer: then a person decides.
 */
export function readFinding(finding: Finding | null, state: AskingState, now: Date): FindingReading {
  if (finding?.found === true) return { kind: "settle", probe: "found" };
  const { config } = state;
  const oldEnough = addS(state.firstDispatchedAt, config.absent_after_s);
  if (finding?.found === false && oldEnough.getTime() <= now.getTime()) return { kind: "settle", probe: "absent" };
  const why =
    finding === null
      ? "no answer"
      : finding.found === false
        ? `not found ${Math.round((now.getTime() - state.firstDispatchedAt.getTime()) / 1000)} s after the first dispatch, before absent_after_s (${config.absent_after_s} s)`
        : "the lookup could not tell";
  if (state.tries >= config.max_tries) return { kind: "give_up", why };
  const next = addS(now, config.every_s);
  const dueAt = finding?.found === false && oldEnough > next ? oldEnough : next;
  return { kind: "ask_again", dueAt, why };
}

/** The note a person reads when Settle stops asking. */
export function gaveUpNote(tries: number, last: string, evidence: string | null | undefined): string {
  const asked = tries === 1 ? "once" : `${tries} times`;
  return `Settle asked ${asked}: no settling answer (last: ${last}${evidence ? `: ${evidence}` : ""}).`;
}

/** When the first ask is due: `after_s` after the call became unknown (for a stall, after its window passed). */
export function firstAskAt(unknownSince: Date, config: VerifyConfig): Date {
  return addS(unknownSince, config.after_s);
}

/** The lease a worker gets when it takes a request. */
export function leaseUntil(now: Date, config: VerifyConfig): Date {
  return addS(now, config.lease_s);
}

// Liveness: a runtime's verifier is asked by pull (a worker polls GET /api/v1/verifications) or push (an enabled
// webhook endpoint takes the asks). With neither, nobody ever answers and the call would wait forever at `try 0`:
// once no worker has asked for two `every_s` (and at least a minute), a person decides.

/** Who Settle's own verifier steps are by, in the audit trail and on the answers. */
export const VERIFIER_ACTOR = "settle:verifier";
/** What a person reads when Settle hands a call over because nobody serves the runtime's verifier. */
export const NO_VERIFIER_RUNNING = "no verifier is running for this runtime";
/** The reason stored with Settle's escalation (the action's payload), so a notification says why. */
export const NO_VERIFIER_REASON = "no_verifier_running";
const MIN_SILENCE_S = 60;

/** How long without a poll means no worker is running for an entry with these settings. */
export const silenceLimitS = (config: Pick<VerifyConfig, "every_s">): number =>
  Math.max(2 * config.every_s, MIN_SILENCE_S);

export type VerifierServing = { lastPollAt: Date | null; push: boolean };

/** Whether a runtime's verifier is being served now, for an entry with these settings. */
export function verifierRunning(serving: VerifierServing, config: Pick<VerifyConfig, "every_s">, now: Date): boolean {
  if (serving.push) return true;
  return serving.lastPollAt !== null && now.getTime() - serving.lastPollAt.getTime() < silenceLimitS(config) * 1000;
}

/**
 * Whether an ask has waited for nobody: Settle has waited on it (since it was due, it existed and Settle was
 * watching — the latest of these, `waitingSince`) for the silence limit, and no worker asked within it. A live
 * worker takes a due ask at its next poll, so it never waits that long.
 */
export function unserved(
  ask: { waitingSince: Date; config: Pick<VerifyConfig, "every_s"> },
  serving: VerifierServing,
  now: Date,
): boolean {
  const limitMs = silenceLimitS(ask.config) * 1000;
  return now.getTime() - ask.waitingSince.getTime() >= limitMs && !verifierRunning(serving, ask.config, now);
}

/** The note with Settle's escalation: why a person decides, and since when nobody asked. */
export function noVerifierNote(runtime: string, lastPollAt: Date | null): string {
  const since = lastPollAt ? `since ${lastPollAt.toISOString()}` : "ever";
  return `Settle hands this call to a person: ${NO_VERIFIER_RUNNING} (${runtime}: no worker has asked for its verifications ${since}, and it has no webhook endpoint). Its outcome stays unknown until someone checks.`;
}
