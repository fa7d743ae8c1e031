import type { EffectClass, NormalizedAttempt, Phase, SafeValue, SpanConvention } from "../outcome/vocabulary";
import { ID_MAX, TOOL_MAX } from "../outcome/record-fields";
import { jsonShape } from "./scan";
import {
  MAX_LIST,
  MAX_TEXT,
  type AttributeValue,
  type Attributes,
  type Span,
  type SpanReading,
  type SpanSource,
} from "./read-spans";
import {
  isKnownEnvelope,
  normalizeEnvelope,
  failureWithoutEvidence,
  isRecord,
  success,
  writeAheadIntent,
  type AdapterContext,
  parseJsonObject,
} from "../ingest";
import { redactText } from "../redact/redact";
import type { StatedFailure } from "./failure-signals";
import { parseExactJson } from "../json/exact";

// What the three OpenTelemetry conventions share once a span is known to be
// a tool call (decision 022): the span's start is the intent, its
// end the outcome; the trace is the task; the tool-call id, or one derived
// from trace and span, is the invocation; the span id makes both records
// idempotent. Pure: no I/O, no clock.

/** What a convention reads from its own attributes. */
export type ToolCall = {
  tool: string;
  /** The id the runtime gave the call; null when the convention has none (then trace:span). */
  callId: string | null;
  /** GenAI's gen_ai.tool.type (function | extension | datastore), for the effect class. */
  toolType: string | null;
  /** The span's own error type (GenAI `error.type`), shown as the attempt's code. */
  errorType: string | null;
  arguments: unknown;
  result: unknown;
  /** Values that may hold an envelope in a known dialect (an MCP CallToolResult, a Settle envelope, …). */
  evidence: unknown[];
  /** The attribute keys read into the fields above: left out of the evidence's copy of the attributes. */
  consumed: string[];
  /** A failure the span states besides its status (lib/otlp/failure-signals.ts); null when it states none. */
  failure: StatedFailure | null;
};

export type SpanAdapter = {
  convention: SpanConvention;
  /** Is this span a tool call in this convention? Every other span is ignored (and counted). */
  detect: (span: Span) => boolean;
  read: (span: Span) => ToolCall;
};

export type SpanOptions = {
  /** The effect class of a tool (the runtime key's catalog, lib/catalog): null is a write. */
  effectClass: (tool: string, toolType: string | null) => EffectClass | null;
  /** A span or resource attribute that names the task instead of the trace (SETTLE_OTLP_TASK_ATTRIBUTE). */
  taskAttribute: string | null;
  /** When the export arrived: the time of a span that states none. */
  receivedAt: Date;
};

/** One attempt record made from a span, as an ingest record is after validation (lib/ingest/record.ts). */
export type SpanRecord = {
  eventId: string;
  taskId: string;
  invocationId: string;
  attemptId: string;
  tool: string;
  phase: Phase;
  at: string;
  effectClass: EffectClass | null;
  normalized: NormalizedAttempt;
  /** The span as evidence (not yet redacted): what it says, with arguments and result. */
  envelope: Record<string, unknown>;
};

const MAX_ID = ID_MAX;
/** A tool's name, as envelope ingest allows it; checked before the name is matched against the catalog. */
export const MAX_TOOL = TOOL_MAX;
/** JSON text nested deeper stays text: what is read as a value must stay within what redact() and the digest walk. */
export const MAX_ATTRIBUTE_JSON_DEPTH = 32;

/** What makes a tool-call span unusable as a whole (its tool's name): that span is rejected, with this reason. */
export class SpanProblem extends Error {}

const STATUS_ERROR = 2;
const STATUS_NAMES = ["UNSET", "OK", "ERROR"];
const KIND_NAMES = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];

export function textAttr(attributes: Attributes, key: string): string | null {
  const v = attributes[key];
  if (typeof v === "string") return v.trim() === "" ? null : v;
  return typeof v === "number" || typeof v === "boolean" ? String(v) : null;
}

/** An attribute holding JSON text (arguments, a result) as the value it encodes; other text stays text. */
export function jsonAttr(attributes: Attributes, key: string): unknown {
  const v: AttributeValue | undefined = attributes[key];
  if (typeof v !== "string") return v;
  const trimmed = v.trim();
  if (!/^[[{"]/.test(trimmed) || !shallowJson(trimmed)) return v;
  try {
    // Exactly: an argument's integer past 2^53 keeps its digits for the approver and the digest (lib/json).
    return parseExactJson(trimmed);
  } catch {
    return v;
  }
}

/** Nested at most MAX_ATTRIBUTE_JSON_DEPTH levels (counted on the text, before it is parsed and walked). */
function shallowJson(text: string): boolean {
  // Deeper takes an opening and a closing bracket a level: most arguments are shorter than that.
  return (
    text.length < 2 * (MAX_ATTRIBUTE_JSON_DEPTH + 1) ||
    jsonShape(text, Number.POSITIVE_INFINITY, MAX_ATTRIBUTE_JSON_DEPTH).over === null
  );
}

/** Candidates for an envelope in a result: the value itself when an object, or a JSON object it is the text of. */
export function envelopeCandidates(...values: unknown[]): unknown[] {
  return values.flatMap((v) => {
    if (isRecord(v)) return [v];
    const parsed = typeof v === "string" && shallowJson(v) ? parseJsonObject(v) : null;
    return parsed ? [parsed] : [];
  });
}

function isError(span: Span, call: ToolCall): boolean {
  if (span.status.code === STATUS_ERROR) return true;
  // OK is the instrumentation's word that it succeeded; UNSET is, unless the span records an error.
  return span.status.code === 0 && (call.errorType !== null || span.events.some((e) => e.name === "exception"));
}

/** The first exception event's type and message: shown to people, never read for meaning. */
function exceptionOf(span: Span): { type: string | null; message: string | null } {
  const event = span.events.find((e) => e.name === "exception");
  return event
    ? { type: textAttr(event.attributes, "exception.type"), message: textAttr(event.attributes, "exception.message") }
    : { type: null, message: null };
}

const MAX_MESSAGE = 4000;
const shown = (v: string | null) =>
  v === null ? null : redactText(v.length > MAX_MESSAGE ? `${v.slice(0, MAX_MESSAGE)}…` : v);

function spanFacts(span: Span, source: SpanSource, convention: SpanConvention): Record<string, SafeValue> {
  const facts: Record<string, SafeValue> = {
    "otel.convention": convention,
    "otel.trace_id": span.traceId,
    "otel.span_id": span.spanId,
  };
  const service = textAttr(source.resource, "service.name");
  if (service) facts["service.name"] = service;
  return facts;
}

/** The outcome a span's end says: a known dialect in its result decides; else its status, and a failed write is unknown. */
function outcomeOf(
  span: Span,
  call: ToolCall,
  convention: SpanConvention,
  ctx: AdapterContext,
  facts: Record<string, SafeValue>,
): NormalizedAttempt {
  for (const candidate of call.evidence) {
    // Most results are plain values: telling so by detection alone spares each a redacted copy.
    if (!isKnownEnvelope(candidate)) continue;
    const read = normalizeEnvelope(candidate, ctx);
    if (read.dialect !== "unrecognized") {
      return Object.assign(read, {
        wrapper_dialect: read.wrapper_dialect ?? convention,
        safe_details: Object.assign({}, read.safe_details, facts),
      });
    }
  }
  const base = { dialect: convention, wrapper_dialect: null };
  // A span that is not ERROR but whose tool said it failed is a failure all the same: never committed on a status.
  if (!isError(span, call) && call.failure) {
    const details: Record<string, SafeValue> = Object.assign({}, facts, { "otel.failure_signal": true });
    return Object.assign(
      failureWithoutEvidence(ctx, {
        code: shown(call.failure.code),
        agent_message: shown(call.failure.message),
        safe_details: details,
      }),
      base,
    );
  }
  if (!isError(span, call)) return Object.assign(success({ safe_details: facts }), base);
  const exception = exceptionOf(span);
  const details: Record<string, SafeValue> = Object.assign({}, facts);
  if (call.errorType) details["error.type"] = shown(call.errorType);
  return Object.assign(
    failureWithoutEvidence(ctx, {
      code: shown(call.errorType ?? exception.type),
      agent_message: shown(span.status.message ?? exception.message),
      safe_details: details,
    }),
    base,
  );
}

function taskOf(span: Span, source: SpanSource, attribute: string | null): string {
  const named = attribute ? (textAttr(span.attributes, attribute) ?? textAttr(source.resource, attribute)) : null;
  return named && named.trim().length <= MAX_ID ? named.trim() : span.traceId;
}

type OtelFacts = {
  convention: SpanConvention;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  start: string | null;
  end: string | null;
  service_name: string | null;
  scope: string | null;
};

function otelOf(span: Span, source: SpanSource, convention: SpanConvention): OtelFacts {
  return {
    convention,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    kind: KIND_NAMES[span.kind] ?? String(span.kind),
    start: span.start,
    end: span.end,
    service_name: textAttr(source.resource, "service.name"),
    scope: source.scope.name,
  };
}

/**
 * The intent's evidence. A span that has ended is kept whole once, on its
 * outcome; its intent names the span (so its row links to the trace). A span
 * still open has only its intent, which then carries the span as read so far.
 */
function intentEvidence(span: Span, otel: OtelFacts, call: ToolCall, ended: boolean): Record<string, unknown> {
  if (ended)
    return {
      otel: { convention: otel.convention, trace_id: otel.trace_id, span_id: otel.span_id },
      tool_call_id: call.callId,
    };
  const truncated = leftOut(span.reading);
  return truncated
    ? { otel, tool_call_id: call.callId, arguments: call.arguments ?? null, truncated }
    : { otel, tool_call_id: call.callId, arguments: call.arguments ?? null };
}

/** What reading the span left out, in words (the evidence's `truncated`); null when it read everything. */
export function leftOut(reading: SpanReading): string[] | null {
  const notes: string[] = [];
  if (reading.attributes > 0)
    notes.push(`${reading.attributes} attributes beyond the first ${MAX_LIST} of a list were not read`);
  if (reading.events > 0) notes.push(`${reading.events} events beyond the first ${MAX_LIST} were not read`);
  if (reading.items > 0)
    notes.push(`${reading.items} array items beyond the first ${MAX_LIST} of an array were not read`);
  if (reading.texts > 0) notes.push(`${reading.texts} texts were cut at ${MAX_TEXT} characters`);
  return notes.length > 0 ? notes : null;
}

/** The outcome's evidence: the whole span as read — status, arguments, result, its other attributes, its events. */
function outcomeEvidence(span: Span, otel: OtelFacts, call: ToolCall): Record<string, unknown> {
  // fromEntries, so an attribute named "__proto__" stays data.
  const attributes = Object.fromEntries(
    Object.entries(span.attributes).filter(([key]) => !call.consumed.includes(key)),
  );
  const evidence: Record<string, unknown> = {
    otel: {
      ...otel,
      status: { code: STATUS_NAMES[span.status.code] ?? String(span.status.code), message: span.status.message },
    },
    tool_call_id: call.callId,
    arguments: call.arguments ?? null,
    result: call.result ?? null,
    attributes,
    events: span.events,
  };
  const truncated = leftOut(span.reading);
  if (truncated) evidence.truncated = truncated;
  return evidence;
}

/**
 * A tool-call span's attempt records: the intent at its start, the outcome
 * at its end (none while it has not ended). Event ids are the span's, so the
 * same span sent twice is a duplicate.
 */
export function spanRecords(adapter: SpanAdapter, span: Span, source: SpanSource, options: SpanOptions): SpanRecord[] {
  const call = adapter.read(span);
  const convention = adapter.convention;
  // Before the catalog sees it: a name no record may carry is matched against nothing.
  const tool = call.tool.trim();
  if (tool.length === 0 || tool.length > MAX_TOOL)
    throw new SpanProblem(`the tool name must be 1 to ${MAX_TOOL} characters.`);
  const effectClass = options.effectClass(tool, call.toolType);
  const given = call.callId?.trim();
  // trace:span, as Settle derives an id from task and key (lib/ingest/record.ts): 49 characters at most.
  const invocationId = given && given.length <= MAX_ID ? given : `${span.traceId}:${span.spanId}`;
  const facts = spanFacts(span, source, convention);
  const otel = otelOf(span, source, convention);
  const taskId = taskOf(span, source, options.taskAttribute);
  const record = (
    phase: Phase,
    at: string,
    normalized: NormalizedAttempt,
    envelope: Record<string, unknown>,
  ): SpanRecord => ({
    eventId: `otel:${span.traceId}:${span.spanId}:${phase}`,
    taskId,
    invocationId,
    attemptId: span.spanId,
    tool,
    phase,
    at,
    effectClass,
    normalized,
    envelope,
  });
  const records: SpanRecord[] = [];
  const start = span.start ?? (span.end ? null : options.receivedAt.toISOString());
  const ended = span.end !== null;
  // The span's facts go with its reading once: on the outcome when there is one.
  if (start)
    records.push(
      record(
        "intent",
        start,
        writeAheadIntent(convention, ended ? {} : facts),
        intentEvidence(span, otel, call, ended),
      ),
    );
  if (span.end) {
    const ctx: AdapterContext = { isWrite: effectClass !== "read", at: span.end };
    records.push(
      record("outcome", span.end, outcomeOf(span, call, convention, ctx, facts), outcomeEvidence(span, otel, call)),
    );
  }
  return records;
}
