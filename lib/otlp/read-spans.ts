import Long from "long";
import { callerTimeIso } from "../outcome/record-fields";

// OTLP trace data as Settle reads it: one shape for both encodings. A
// protobuf export (the messages protobufjs decodes, read as they are: no
// toObject copy) and an OTLP/JSON export have the same field names; they
// differ in how ids are written (bytes vs hex) and int64s (Long vs string or
// number). A decoded message keeps unset fields' defaults on its prototype,
// so a oneof is told by own properties only. Pure: no I/O.

export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

export type SpanEvent = { name: string; at: string | null; attributes: Attributes };

/**
 * What reading a span took and left out. Per list (a span's or an event's
 * attributes, a kvlist) at most MAX_LIST entries are read, at most MAX_LIST
 * events and MAX_LIST array items; a text longer than MAX_TEXT characters is
 * cut, with a marker saying so. `characters` and `values` measure what was
 * read, so the evidence's size is known without serializing it.
 */
export type SpanReading = {
  characters: number;
  values: number;
  attributes: number;
  events: number;
  items: number;
  texts: number;
};

/** A span, read: ids lowercase hex, times ISO 8601 (ms), `end` null while it has not ended. */
export type Span = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  start: string | null;
  end: string | null;
  attributes: Attributes;
  /** StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string | null };
  events: SpanEvent[];
  reading: SpanReading;
};

/** Where a span came from: its resource (service.name, …) and instrumentation scope. */
export type SpanSource = { resource: Attributes; scope: { name: string | null; version: string | null } };

/** A span as read, with what makes it unusable (a bad id, a time out of range); empty when none. */
export type ReadSpan = { span: Span; source: SpanSource; problems: string[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const MAX_DEPTH = 8;

/** The SDK's default limit on attributes, events and links per span (OTEL_SPAN_*_COUNT_LIMIT), here per list read. */
export const MAX_LIST = 128;
/** Characters of one text (an attribute, a name, a status message) read; the rest is cut, with textCut's marker. */
export const MAX_TEXT = 64 * 1024;
export const textCut = (length: number) => `…[truncated by Settle: ${length} characters in all]`;

const newReading = (): SpanReading => ({ characters: 0, values: 0, attributes: 0, events: 0, items: 0, texts: 0 });

function cutText(value: string, reading: SpanReading): string {
  if (value.length <= MAX_TEXT) {
    reading.characters += value.length;
    return value;
  }
  reading.texts += 1;
  reading.characters += MAX_TEXT;
  // Not between the halves of a surrogate pair.
  const end =
    value.charCodeAt(MAX_TEXT - 1) >= 0xd800 && value.charCodeAt(MAX_TEXT - 1) <= 0xdbff ? MAX_TEXT - 1 : MAX_TEXT;
  return `${value.slice(0, end)}${textCut(value.length)}`;
}

// protobufjs's int64: a Long (two 32-bit halves). Only a decoded message holds one; OTLP/JSON cannot.
const isLong = (v: unknown): v is Long => v instanceof Long;
const HALF = 2 ** 32;

/** A Long as a number when it is a safe integer, else its decimal text. */
function longValue(v: Long): number | string {
  const high = v.unsigned ? v.high >>> 0 : v.high;
  const n = high * HALF + (v.low >>> 0);
  return Number.isSafeInteger(n) ? n : v.toString();
}

/** An OTLP AnyValue as a JSON value; bytes are kept as base64 text. */
export function anyValue(v: unknown, depth = 0, reading = newReading()): AttributeValue {
  if (!isObject(v) || depth > MAX_DEPTH) return null;
  reading.values += 1;
  const has = Object.hasOwn;
  if (has(v, "stringValue"))
    return cutText(typeof v.stringValue === "string" ? v.stringValue : String(v.stringValue), reading);
  if (has(v, "boolValue")) return v.boolValue === true || v.boolValue === "true";
  if (has(v, "intValue")) {
    if (isLong(v.intValue)) return longValue(v.intValue);
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if (has(v, "doubleValue")) {
    const n = Number(v.doubleValue);
    return Number.isFinite(n) ? n : String(v.doubleValue);
  }
  if (has(v, "bytesValue")) return cutText(bytesBase64(v.bytesValue), reading);
  if (has(v, "arrayValue")) {
    const values = isObject(v.arrayValue) && Array.isArray(v.arrayValue.values) ? v.arrayValue.values : [];
    const n = Math.min(values.length, MAX_LIST);
    reading.items += values.length - n;
    const out: AttributeValue[] = new Array(n);
    for (let i = 0; i < n; i += 1) out[i] = anyValue(values[i], depth + 1, reading);
    return out;
  }
  if (has(v, "kvlistValue")) {
    const values = isObject(v.kvlistValue) && Array.isArray(v.kvlistValue.values) ? v.kvlistValue.values : [];
    return attributesOf(values, depth + 1, reading);
  }
  return null;
}

const bufferOf = (v: Uint8Array) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

function bytesBase64(v: unknown): string {
  if (v instanceof Uint8Array) return bufferOf(v).toString("base64");
  return typeof v === "string" ? v : "";
}

/** A KeyValue list's first MAX_LIST entries as an object; a repeated key keeps its last value. Built with fromEntries, so "__proto__" stays data. */
export function attributesOf(list: unknown, depth = 0, reading = newReading()): Attributes {
  if (!Array.isArray(list)) return {};
  const n = Math.min(list.length, MAX_LIST);
  reading.attributes += list.length - n;
  const entries: Array<[string, AttributeValue]> = [];
  for (let i = 0; i < n; i += 1) {
    const kv: unknown = list[i];
    if (isObject(kv) && typeof kv.key === "string")
      entries.push([cutText(kv.key, reading), anyValue(kv.value, depth, reading)]);
  }
  return Object.fromEntries(entries);
}

const HEX = /^[0-9a-f]*$/;
const ZEROS = /^0+$/;

/** An id as lowercase hex, or null when it is not `bytes` bytes long or is all zeros (an invalid id in OTLP). */
function idOf(v: unknown, bytes: number): string | null {
  if (v instanceof Uint8Array) {
    if (v.length !== bytes || v.every((b) => b === 0)) return null;
    return bufferOf(v).toString("hex");
  }
  if (typeof v !== "string") return null;
  const hex = v.toLowerCase();
  return hex.length === bytes * 2 && HEX.test(hex) && !ZEROS.test(hex) ? hex : null;
}

/** Nanoseconds since the epoch (a string or a number) as ISO 8601; null for 0 or absent; undefined when unreadable. */
function timeOf(v: unknown): string | null | undefined {
  if (v === undefined || v === null || v === 0 || v === "0" || v === "") return null;
  let ms: number;
  if (isLong(v)) {
    // Exact without BigInt: 2^32 ns = 4294 ms + 967296 ns, and high · 967296 + low stays below 2^53.
    const high = v.unsigned ? v.high >>> 0 : v.high;
    if (high < 0) return undefined;
    if (high === 0 && v.low === 0) return null;
    ms = high * 4294 + Math.floor((high * 967_296 + (v.low >>> 0)) / 1_000_000);
  } else if (typeof v === "number" && Number.isFinite(v) && v >= 0) ms = Math.floor(v / 1_000_000);
  // Whole milliseconds are the digits before the last six: no BigInt needed.
  else if (typeof v === "string" && /^\d{1,20}$/.test(v)) ms = v.length > 6 ? Number(v.slice(0, -6)) : 0;
  else return undefined;
  // The times Settle takes from a caller (lib/outcome/record-fields.ts): OTLP counts from 1970 and 20 digits of
  // nanoseconds end in the year 5138, so this holds already; kept so the rule stays one.
  return callerTimeIso(ms) ?? undefined;
}

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);
// A decoded message reads an unset string as "": absent, as in OTLP/JSON.
const given = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const cutGiven = (v: unknown): string | null => {
  const g = given(v);
  return g === null ? null : cutText(g, newReading());
};
const int = (v: unknown): number => {
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === "number" && Number.isInteger(n) ? n : 0;
};

// OTLP/JSON must write enums as numbers; a name, as the proto3 JSON mapping allows, is read too.
const KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS_CODES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };
const enumOf = (v: unknown, names: Record<string, number>) =>
  typeof v === "string" && Object.hasOwn(names, v) ? names[v]! : int(v);

/** Reads one span object (protobuf-decoded or OTLP/JSON); never throws for the span's own content. */
export function readSpan(raw: unknown, source: SpanSource): ReadSpan {
  const problems: string[] = [];
  const s = isObject(raw) ? raw : {};
  if (!isObject(raw)) problems.push("a span must be an object");
  const traceId = idOf(s.traceId, 16);
  const spanId = idOf(s.spanId, 8);
  if (traceId === null) problems.push("traceId is not a valid trace id (16 bytes, not all zero; hex in OTLP/JSON)");
  if (spanId === null) problems.push("spanId is not a valid span id (8 bytes, not all zero; hex in OTLP/JSON)");
  const parent =
    s.parentSpanId === undefined ||
    s.parentSpanId === "" ||
    (s.parentSpanId instanceof Uint8Array && s.parentSpanId.length === 0)
      ? null
      : idOf(s.parentSpanId, 8);
  const start = timeOf(s.startTimeUnixNano);
  const end = timeOf(s.endTimeUnixNano);
  if (start === undefined) problems.push("startTimeUnixNano is not a time Settle can store");
  if (end === undefined) problems.push("endTimeUnixNano is not a time Settle can store");
  const status = isObject(s.status) ? s.status : {};
  const reading = newReading();
  const events: SpanEvent[] = [];
  if (Array.isArray(s.events)) {
    const n = Math.min(s.events.length, MAX_LIST);
    reading.events = s.events.length - n;
    for (let i = 0; i < n; i += 1) {
      const e: unknown = s.events[i];
      if (isObject(e))
        events.push({
          name: cutText(text(e.name) ?? "", reading),
          at: timeOf(e.timeUnixNano) ?? null,
          attributes: attributesOf(e.attributes, 0, reading),
        });
    }
  }
  const name = text(s.name);
  const message = text(status.message);
  return {
    span: {
      traceId: traceId ?? "",
      spanId: spanId ?? "",
      parentSpanId: parent,
      name: name === null ? "" : cutText(name, reading),
      kind: enumOf(s.kind, KINDS),
      start: start ?? null,
      end: end ?? null,
      attributes: attributesOf(s.attributes, 0, reading),
      status: { code: enumOf(status.code, STATUS_CODES), message: message ? cutText(message, reading) : null },
      events,
      reading,
    },
    source,
    problems,
  };
}

export type ExportShapeProblem = { path: string; message: string };

/**
 * Every span of an ExportTraceServiceRequest (as plain objects), with its
 * source. A structure that is not OTLP above the spans (resourceSpans not a
 * list, …) is the request's problem: returned as such, nothing is read.
 */
export function spansOf(request: unknown): ReadSpan[] | ExportShapeProblem {
  if (!isObject(request)) return { path: "", message: "the body is not an ExportTraceServiceRequest object" };
  const resourceSpans = request.resourceSpans ?? [];
  if (!Array.isArray(resourceSpans)) return { path: "resourceSpans", message: "resourceSpans must be a list" };
  const out: ReadSpan[] = [];
  for (const [i, rs] of resourceSpans.entries()) {
    if (!isObject(rs)) return { path: `resourceSpans[${i}]`, message: "must be an object" };
    const resource = attributesOf(isObject(rs.resource) ? rs.resource.attributes : undefined);
    const scopeSpans = rs.scopeSpans ?? [];
    if (!Array.isArray(scopeSpans)) return { path: `resourceSpans[${i}].scopeSpans`, message: "must be a list" };
    for (const [j, ss] of scopeSpans.entries()) {
      if (!isObject(ss)) return { path: `resourceSpans[${i}].scopeSpans[${j}]`, message: "must be an object" };
      const scope = isObject(ss.scope) ? ss.scope : {};
      const source: SpanSource = { resource, scope: { name: cutGiven(scope.name), version: cutGiven(scope.version) } };
      const spans = ss.spans ?? [];
      if (!Array.isArray(spans))
        return { path: `resourceSpans[${i}].scopeSpans[${j}].spans`, message: "must be a list" };
      for (const raw of spans) out.push(readSpan(raw, source));
    }
  }
  return out;
}

/** The number of spans an export holds, counted before any is read (for the per-request limit). */
export function countSpans(request: unknown): number {
  if (!isObject(request) || !Array.isArray(request.resourceSpans)) return 0;
  let n = 0;
  for (const rs of request.resourceSpans) {
    if (!isObject(rs) || !Array.isArray(rs.scopeSpans)) continue;
    for (const ss of rs.scopeSpans) if (isObject(ss) && Array.isArray(ss.spans)) n += ss.spans.length;
  }
  return n;
}
