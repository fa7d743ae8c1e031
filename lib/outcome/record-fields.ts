import { z } from "zod";
import { isoOfMs } from "./time";

// The limits of a record's fields, stated once for every way a record or an
// id arrives: ingest, the guard, OTLP spans, and the routes' path and query
// parameters. An id Settle would never store is refused where it comes in,
// not looked up and missed.

/** task_id, invocation_id, attempt_id, event_id, args_digest (an invocation id derived from a long key is hashed to fit). */
export const ID_MAX = 256;
/** idempotency_key (and its other names: operation_ref, intent_key). */
export const KEY_MAX = 512;
export const TOOL_MAX = 200;
export const RUNTIME_NAME_MAX = 200;
/** effect_class as sent: one of the five, or anything else up to this length (kept, and treated as a write). */
export const EFFECT_CLASS_MAX = 64;
/** A time as sent (ISO 8601, or source article 002 (docs/outcome-model.md)'s time of day). */
export const TIME_TEXT_MAX = 64;
/**
 * The times Settle takes from a caller (a record's `at`, the guard's `at`, a span's times, a retry time an
 * envelope gives): from the Unix epoch to the end of the year 8999, UTC. Every reader of a stored time must
 * hold it and what it adds to or takes from it — PostgreSQL (no year 0), ISO 8601 text with a four-digit
 * year, the duplicate check (`at` less a window of up to 90 days), the stall time (`at` plus a budget of up
 * to a year), the clients (Python's datetime, tools that keep seconds since 1970). A thousand years of room
 * at the top leaves space for any window a reader adds later.
 */
export const CALLER_TIME_MIN = "1970-01-01T00:00:00.000Z";
export const CALLER_TIME_MAX = "8999-12-31T23:59:59.999Z";
const CALLER_MIN_MS = Date.parse(CALLER_TIME_MIN);
const CALLER_MAX_MS = Date.parse(CALLER_TIME_MAX);
export const CALLER_TIME_RANGE = `from ${CALLER_TIME_MIN.slice(0, 10)} to ${CALLER_TIME_MAX.slice(0, 10)} (UTC)`;

/** The ISO text of a time a caller gave, or null when it lies outside CALLER_TIME_MIN…CALLER_TIME_MAX. */
export function callerTimeIso(ms: number): string | null {
  return Number.isFinite(ms) && ms >= CALLER_MIN_MS && ms <= CALLER_MAX_MS ? isoOfMs(ms) : null;
}

/** budget_left_s: at most a year. */
export const BUDGET_MAX_S = 31_536_000;
export const ATTEMPT_MAX = 1_000_000;

/** An id in a record or a request body: trimmed, as ingest stores it. */
export const idSchema = z.string().trim().min(1).max(ID_MAX);
/** An id in a path: as sent (a lookup of an id Settle trimmed at ingest finds nothing, as before). */
export const idParamSchema = z.string().min(1).max(ID_MAX);
export const idempotencyKeySchema = z.string().min(1).max(KEY_MAX);
export const toolNameSchema = z.string().trim().min(1).max(TOOL_MAX);
export const runtimeNameSchema = z.string().min(1).max(RUNTIME_NAME_MAX);
/** `runtime` beside a task or invocation id: which runtime's, when several runtimes use the same id. */
export const runtimeChoiceSchema = runtimeNameSchema
  .optional()
  .describe("The runtime's name, when several runtimes use this id.");
export const effectClassTextSchema = z.string().max(EFFECT_CLASS_MAX);
export const timeTextSchema = z.string().max(TIME_TEXT_MAX);
export const budgetSchema = z.number().min(0).max(BUDGET_MAX_S);
export const attemptNumberSchema = z.number().int().min(0).max(ATTEMPT_MAX);

/** arguments: the call's arguments, a JSON object of at most this many bytes as JSON (UTF-8). */
export const ARGUMENTS_MAX_BYTES = 65_536;
/** A record's or a guard call's arguments: a JSON object (its size and depth are checked where it is read). */
export const argumentsSchema = z
  .record(z.string(), z.unknown())
  .describe(
    `The call's arguments (a JSON object, at most ${ARGUMENTS_MAX_BYTES} bytes): Settle digests them (args_digest) and stores them, secrets redacted.`,
  );
export const argsDigestSchema = z
  .string()
  .max(ID_MAX)
  .describe(
    "A digest of the call's arguments, taken as given: `sha256:` and the hex SHA-256 of their canonical JSON without the volatile arguments.",
  );

/**
 * Top-level argument names left out of the arguments' digest when the tool's catalog entry names none:
 * values that change on every retry of the same intent.
 */
export const DEFAULT_VOLATILE_ARGS: readonly string[] = ["idempotency_key", "request_id", "nonce", "timestamp"];
export const VOLATILE_ARGS_MAX = 32;
export const VOLATILE_ARG_MAX = 100;
export const volatileArgsSchema = z
  .array(z.string().trim().min(1).max(VOLATILE_ARG_MAX))
  .max(VOLATILE_ARGS_MAX)
  .describe(
    `Top-level argument names left out of the arguments' digest (at most ${VOLATILE_ARGS_MAX}); null: ${DEFAULT_VOLATILE_ARGS.join(", ")}.`,
  );
