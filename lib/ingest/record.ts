import { createHash } from "node:crypto";
import { z } from "zod";
import { isRecord, writeAheadIntent } from "./adapters/shared";
import { argsDigest, canonicalJson } from "../write/args-digest";
import { memberOf } from "../outcome/vocabulary";
import {
  ARGUMENTS_MAX_BYTES,
  argsDigestSchema,
  argumentsSchema,
  attemptNumberSchema,
  budgetSchema,
  CALLER_TIME_RANGE,
  callerTimeIso,
  effectClassTextSchema,
  ID_MAX,
  idSchema,
  KEY_MAX,
  timeTextSchema,
  toolNameSchema,
} from "../outcome/record-fields";
import { MAX_JSON_DEPTH, tooDeepMember } from "../json/depth";
import { normalizeEnvelope, normalizeRedactedEnvelope } from "./normalize";
import { cleanText, redact, TooDeepError } from "../redact/redact";
import { holdsBigInt, roundBigInts, stringifyExactJson } from "../json/exact";
import type { PreparedRecord } from "../write/prepared-record";
import {
  effectClassSchema,
  phaseSchema,
  probeResultSchema,
  type EffectClass,
  type Phase,
  type ProbeResult,
} from "../outcome/vocabulary";

// One ingest record (docs/outcome-model.md §2) turned into the row Settle stores. Pure apart
// from hashing: the same record and `receivedAt` always prepare the same way.

const optionalText = (max: number) => z.string().max(max).nullish();

export const ingestRecordSchema = z.object({
  event_id: idSchema.nullish(),
  task_id: idSchema,
  invocation_id: idSchema.nullish(),
  attempt_id: optionalText(ID_MAX),
  attempt: attemptNumberSchema.nullish(),
  tool: toolNameSchema,
  phase: phaseSchema.nullish(),
  at: timeTextSchema.nullish(),
  idempotency_key: optionalText(KEY_MAX),
  effect_class: effectClassTextSchema.nullish(),
  budget_left_s: budgetSchema.nullish(),
  args_digest: argsDigestSchema.nullish(),
  arguments: argumentsSchema.nullish(),
  envelope: z.unknown().optional(),
});
export type IngestRecord = z.infer<typeof ingestRecordSchema>;

/** source article 002 (docs/outcome-model.md)'s attempt log line, accepted as a record as is. */
export const attemptLogLineSchema = z.object({
  event_id: idSchema.nullish(),
  task: idSchema,
  call: toolNameSchema,
  intent_key: optionalText(KEY_MAX),
  attempt: attemptNumberSchema.nullish(),
  started: timeTextSchema.nullish(),
  budget_left_s: budgetSchema.nullish(),
  outcome: z.enum(["ok", "retryable", "permanent", "unknown"]).nullish(),
  effect_applied: z.enum(["yes", "no", "partial", "unknown"]).nullish(),
  probe: probeResultSchema.nullish(),
  effect_class: effectClassTextSchema.nullish(),
});

const effectClassOf = memberOf(effectClassSchema);

/** The volatile arguments of a tool (its runtime's catalog, lib/catalog), for the digest of its arguments. */
export type VolatileArgsOf = (tool: string) => readonly string[];

/**
 * What a record learns of its tool from the runtime's catalog (lib/catalog): the arguments its digest leaves out,
 * and the effect class of a record that names none (a record's own class wins).
 */
export type ToolReading = { volatileArgs: VolatileArgsOf; effectClass: (tool: string) => EffectClass | null };

/** Whether reading `raw` needs its runtime's catalog: it names no effect class Settle knows, or carries arguments. */
export function needsToolReading(raw: unknown): boolean {
  if (!isRecord(raw)) return false;
  return effectClassOf(raw.effect_class) === null || (raw.arguments !== undefined && raw.arguments !== null);
}

/** A write-ahead intent carries no result: nothing is known yet, by construction. */
const INTENT = writeAheadIntent("settle");

export type RecordProblem = { code: string; message: string; path?: string };

export function contentHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}

/** The invocation id of a record that names only its task and key (docs/outcome-model.md §1); the guard names new invocations the same way. */
export function deriveInvocationId(taskId: string, key: string): string {
  const derived = `${taskId}:${key}`;
  return derived.length <= ID_MAX ? derived : `${taskId.slice(0, 180)}:sha256:${contentHash(derived).slice(0, 32)}`;
}

/**
 * "05:12:04" (source article 002 (docs/outcome-model.md)'s log) is a time of day: it is placed on the latest
 * day that does not put it in the future, so a line written just before
 * midnight and received just after stays on its own day.
 */
function parseAt(value: string | null | undefined, receivedAt: Date): string | RecordProblem {
  if (value === null || value === undefined || value === "") return receivedAt.toISOString();
  if (/^\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value)) {
    const sameDay = new Date(`${receivedAt.toISOString().slice(0, 10)}T${value}Z`);
    if (Number.isNaN(sameDay.getTime()))
      return { code: "INVALID_TIMESTAMP", message: "`started` is not a valid time of day.", path: "started" };
    const clockSkew = 5 * 60 * 1000;
    const day = 24 * 60 * 60 * 1000;
    return new Date(
      sameDay.getTime() > receivedAt.getTime() + clockSkew ? sameDay.getTime() - day : sameDay.getTime(),
    ).toISOString();
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    return { code: "INVALID_TIMESTAMP", message: "`at` must be an ISO 8601 date-time.", path: "at" };
  }
  return (
    callerTimeIso(ms) ?? {
      code: "INVALID_TIMESTAMP",
      message: `\`at\` must lie ${CALLER_TIME_RANGE}, the times every reader of it holds.`,
      path: "at",
    }
  );
}

function fromLogLine(line: z.infer<typeof attemptLogLineSchema>): IngestRecord & { probe: ProbeResult | null } {
  // Written before the call (no outcome yet) it is the intent; updated after, the outcome.
  const phase: Phase = line.outcome ? "outcome" : "intent";
  return {
    event_id: line.event_id,
    task_id: line.task,
    tool: line.call,
    idempotency_key: line.intent_key,
    attempt: line.attempt,
    at: line.started,
    budget_left_s: line.budget_left_s,
    effect_class: line.effect_class,
    phase,
    envelope: line,
    probe: line.probe ?? null,
  };
}

function firstIssue(error: z.ZodError): RecordProblem {
  const issue = error.issues[0];
  const path = issue?.path.join(".") ?? "";
  return {
    code: path === "task_id" || path === "tool" ? "MISSING_REQUIRED_FIELD" : "INVALID_RECORD",
    message: path ? `${path}: ${issue?.message}` : (issue?.message ?? "invalid record"),
    path,
  };
}

/**
 * The arguments' digest and stored (redacted) form: Settle's digest when the
 * record carries arguments (taken before redaction, so two calls that differ
 * only in a secret differ), else the digest it gave, as given.
 */
export function readArguments(
  args: Record<string, unknown> | null | undefined,
  given: string | null | undefined,
  tool: string,
  volatileArgs: VolatileArgsOf | undefined,
): { digest: string | null; stored: unknown } | RecordProblem {
  if (args === null || args === undefined) return { digest: given ? cleanText(given) : null, stored: null };
  const bytes = Buffer.byteLength(stringifyExactJson(args), "utf8");
  if (bytes > ARGUMENTS_MAX_BYTES) {
    return {
      code: "INVALID_RECORD",
      message: `arguments are ${bytes} bytes as JSON; at most ${ARGUMENTS_MAX_BYTES} are stored (send args_digest instead).`,
      path: "arguments",
    };
  }
  try {
    return { digest: argsDigest(args, volatileArgs?.(tool)), stored: redact(args) };
  } catch (error) {
    if (error instanceof TooDeepError)
      return { code: "INVALID_RECORD", message: `arguments are ${error.message}.`, path: "arguments" };
    throw error;
  }
}

/**
 * A record parsed with its integers past 2^53 as BigInts (lib/json): they keep their digits where a person
 * sees them and the digest reads them — `arguments` and `envelope` — and are rounded everywhere else, so an
 * attempt number or a budget is read exactly as JSON.parse reads it.
 */
function keepDigitsWhereShown(raw: Record<string, unknown>): Record<string, unknown> {
  if (!holdsBigInt(raw)) return raw;
  const rounded = roundBigInts(raw);
  if ("arguments" in raw) rounded.arguments = raw.arguments;
  if ("envelope" in raw) rounded.envelope = raw.envelope;
  return rounded;
}

/**
 * `longIntegers`: the record was parsed with lib/json's exact reading and may hold BigInts (ingest's body
 * says so); a record built in code (the guard's intent) holds them only where it put them.
 */
export function prepareRecord(
  raw: unknown,
  receivedAt: Date,
  tools?: ToolReading,
  longIntegers = false,
): PreparedRecord | RecordProblem {
  if (!isRecord(raw)) return { code: "INVALID_RECORD", message: "A record must be a JSON object." };
  // Before anything walks it (the schema, redaction, the hash of a record without event_id): a
  // record nested thousands deep would overflow the stack of a recursive walk.
  const deep = tooDeepMember(raw, MAX_JSON_DEPTH);
  if (deep !== null) {
    const path = cleanText(deep.slice(0, 64));
    const code = deep === "envelope" ? "ENVELOPE_TOO_DEEP" : "RECORD_TOO_DEEP";
    return {
      code,
      message: `\`${path}\` is nested deeper than a record may be (${MAX_JSON_DEPTH} levels of arrays and objects).`,
      path,
    };
  }
  const fields = longIntegers ? keepDigitsWhereShown(raw) : raw;
  let record: IngestRecord;
  let probe: ProbeResult | null = null;
  let envelopeSource: unknown;
  if (!("task_id" in fields) && "task" in fields && "call" in fields) {
    const parsed = attemptLogLineSchema.safeParse(fields);
    if (!parsed.success) return firstIssue(parsed.error);
    const line = fromLogLine(parsed.data);
    probe = line.probe;
    record = line;
    // The line's own outcome is read as a source article 002 (docs/outcome-model.md) envelope.
    envelopeSource = parsed.data.outcome
      ? { outcome: parsed.data.outcome, effect_applied: parsed.data.effect_applied ?? undefined, items: [] }
      : undefined;
  } else {
    const parsed = ingestRecordSchema.safeParse(fields);
    if (!parsed.success) return firstIssue(parsed.error);
    record = parsed.data;
    envelopeSource = record.envelope;
  }

  const at = parseAt(record.at, receivedAt);
  if (typeof at !== "string") return at;

  const envelope = isRecord(record.envelope) ? record.envelope : undefined;
  const key = record.idempotency_key ?? (typeof envelope?.operation_ref === "string" ? envelope.operation_ref : null);
  const invocationId = record.invocation_id ?? (key ? deriveInvocationId(record.task_id, key) : null);
  if (!invocationId) {
    return {
      code: "MISSING_INVOCATION_ID",
      message: "A record needs `invocation_id`, or an `idempotency_key` (operation_ref, intent_key) to derive it from.",
      path: "invocation_id",
    };
  }

  const tool = cleanText(record.tool);
  // The record's own class, else its tool's in the runtime's catalog: read before the envelope, whose reading depends on it.
  const effectClass = effectClassOf(record.effect_class) ?? tools?.effectClass(tool) ?? null;
  const phase = record.phase ?? "outcome";
  let storedEnvelope: unknown;
  try {
    storedEnvelope = record.envelope === undefined ? null : redact(record.envelope);
  } catch (error) {
    if (error instanceof TooDeepError)
      return { code: "ENVELOPE_TOO_DEEP", message: `envelope is ${error.message}.`, path: "envelope" };
    throw error;
  }

  const args = readArguments(record.arguments, record.args_digest, tool, tools?.volatileArgs);
  if ("code" in args) return args;

  const ctx = { isWrite: effectClass !== "read", at };
  // Read from the envelope as stored, secrets redacted: what is derived from it cannot carry one either.
  const normalized =
    phase === "intent"
      ? INTENT
      : envelopeSource === record.envelope
        ? normalizeRedactedEnvelope(envelopeSource === undefined ? undefined : storedEnvelope, ctx)
        : normalizeEnvelope(envelopeSource, ctx);

  return {
    eventKey: record.event_id ? cleanText(record.event_id) : `sha256:${contentHash(raw)}`,
    eventId: record.event_id ? cleanText(record.event_id) : null,
    taskId: cleanText(record.task_id),
    invocationId: cleanText(invocationId),
    attemptId: record.attempt_id ? cleanText(record.attempt_id) : null,
    attemptNo: record.attempt ?? null,
    tool,
    phase,
    at,
    effectClass,
    idempotencyKey: key ? cleanText(key) : null,
    // Whole seconds, as stored: the fold reads the same value from a new record as from the database.
    budgetLeftS:
      record.budget_left_s === null || record.budget_left_s === undefined ? null : Math.round(record.budget_left_s),
    argsDigest: args.digest,
    arguments: args.stored,
    summary: null,
    normalized,
    probeResult: probe,
    envelope: storedEnvelope,
  };
}
