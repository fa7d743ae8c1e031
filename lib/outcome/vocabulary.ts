import { z } from "zod";
import { invocationStatuses } from "./status";
import { effectClasses } from "./queue-order";
import { duplicateReviews } from "./duplicates";

/** A hint inside an envelope that Settle could not use: dropped from the normalized reading, kept in the envelope. */
export const ignoredHintSchema = z.object({
  field: z.string().describe("The normalized field, e.g. retry.not_before, or the envelope key it came from."),
  reason: z.string(),
});
export type IgnoredHint = z.infer<typeof ignoredHintSchema>;

/** How the intent Settle's guard writes when it allows a call begins its event id (lib/guard); the timeline tells it from the runtime's own. */
export const GUARD_INTENT_PREFIX = "guard:";

// The closed vocabularies of docs/outcome-model.md §2–§4. Their string values are the public
// contract: API responses, stored rows and the console all use them verbatim.

export const dialects = [
  "settle",
  "seed001",
  "seed002",
  "seed003",
  "seed004",
  "rfc9457",
  "mcp",
  "anthropic",
  "openai",
  "unrecognized",
  // OpenTelemetry tool-call spans (OTLP ingest), one per convention: lib/otlp/conventions/.
  "otel-genai",
  "otel-vercel-ai",
  "otel-openinference",
  // A verifier's answer to Settle's request (lib/verify): never detected in an envelope, only written by Settle.
  "settle-verifier",
] as const;
export const dialectSchema = z.enum(dialects);
export type Dialect = z.infer<typeof dialectSchema>;

export const spanConventions = [
  "otel-genai",
  "otel-vercel-ai",
  "otel-openinference",
] as const satisfies readonly Dialect[];
export type SpanConvention = (typeof spanConventions)[number];

export const invocationStatusSchema = z.enum(invocationStatuses);

export const commitStateSchema = z.enum(["committed", "not_committed", "unknown", "partial"]);
export type CommitState = z.infer<typeof commitStateSchema>;

export const outcomeSchema = z.enum(["ok", "retryable", "permanent", "unknown"]);
export type Outcome = z.infer<typeof outcomeSchema>;

export const categorySchema = z.enum([
  "validation",
  "authorization",
  "conflict",
  "dependency",
  "internal",
  "rate_limit",
]);
export type Category = z.infer<typeof categorySchema>;

export const retryDirectiveSchema = z.enum(["never", "after_delay", "after_input_fix", "allowed"]);
export type RetryDirective = z.infer<typeof retryDirectiveSchema>;

export const nextActionSchema = z.enum([
  "none",
  "correct_input",
  "wait_and_retry",
  "verify_operation",
  "request_approval",
  "escalate",
  "choose_alternative",
]);
export type NextAction = z.infer<typeof nextActionSchema>;

export const dispatchStageSchema = z.enum(["pre_dispatch", "dispatch_unconfirmed", "dispatched", "evidence_failed"]);
export type DispatchStage = z.infer<typeof dispatchStageSchema>;

export const itemAppliedSchema = z.enum(["yes", "no", "unknown"]);
export type ItemApplied = z.infer<typeof itemAppliedSchema>;

export const phaseSchema = z.enum(["intent", "outcome", "probe"]);
export type Phase = z.infer<typeof phaseSchema>;

export const effectClassSchema = z.enum(effectClasses);
export type EffectClass = z.infer<typeof effectClassSchema>;

/** source article 002 (docs/outcome-model.md)'s probe vocabulary, as written in its attempt log line. */
export const probeResultSchema = z.enum(["found", "absent", "failed"]);
export type ProbeResult = z.infer<typeof probeResultSchema>;

export const retrySchema = z.object({
  directive: retryDirectiveSchema,
  not_before: z.string().nullable(),
  max_attempts_remaining: z.number().int().nullable(),
});
export type Retry = z.infer<typeof retrySchema>;

export const itemSchema = z.object({
  item_id: z.string(),
  applied: itemAppliedSchema,
  reason: z.string().nullable(),
});
export type Item = z.infer<typeof itemSchema>;

/**
 * A member of one of the closed vocabularies above, or null: the same test as
 * the schema's safeParse, as a set lookup (adapters make several per record).
 */
export function memberOf<T extends string>(schema: { options: readonly T[] }): (v: unknown) => T | null {
  const members = new Set<string>(schema.options);
  return (v) => (typeof v === "string" && members.has(v) ? (v as T) : null);
}

export type SafeValue = string | number | boolean | null | Array<string | number | boolean | null>;

/** What every adapter produces: one attempt read in Settle's outcome model. */
export type NormalizedAttempt = {
  dialect: Dialect;
  wrapper_dialect: Dialect | null;
  outcome: Outcome;
  commit_state: CommitState;
  code: string | null;
  category: Category | null;
  retry: Retry;
  next_action: NextAction;
  dispatch_stage: DispatchStage | null;
  safe_details: Record<string, SafeValue>;
  agent_message: string | null;
  user_message: string | null;
  items: Item[];
  /** Hints the envelope gave that Settle could not use (out of range, unreadable); the envelope keeps them. */
  ignored?: IgnoredHint[];
};

/** Where an operator's review of a possible duplicate stands (duplicates.ts). */
export const duplicateReviewSchema = z.enum(duplicateReviews);

/** An approval with edited arguments: the members the approver changed, each before and after (invocations/arguments-diff.ts). */
export const argumentEditSchema = z.object({
  changes: z.array(
    z.object({
      path: z.string().describe("The member, dotted from the top (arrays are compared whole)."),
      before: z.unknown().optional().describe("Absent: the edit added the member."),
      after: z.unknown().optional().describe("Absent: the edit removed the member."),
    }),
  ),
});
