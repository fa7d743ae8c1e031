import type protobuf from "protobufjs/light";
import { ApiError } from "../errors";

// A body is counted before it is decoded. protobufjs and JSON.parse build an
// object for every element they meet: 8 MiB of empty KeyValues (two bytes
// each) would become four million objects, half a gigabyte, before a single
// span is read. These scans read the wire (protobuf tags and lengths, JSON
// punctuation) without building anything, iteratively, and refuse a body that
// holds more elements or nests deeper than any real export; what they pass is
// bounded in memory and in every later walk's depth.

/**
 * Protobuf messages and repeated values a request may hold: 128 a span for
 * 1,024 spans (the per-request limit), that is about 60 attributes each, a
 * KeyValue and its AnyValue being two messages. An SDK's default batch is 512
 * spans of a few dozen attributes. Decoded, at most about 25 MB; more, and the
 * body is refused unread.
 */
export const MAX_ELEMENTS = 131_072;

/** Message nesting: a span's attributes sit at level 5, and Settle reads AnyValues 8 levels into them (about 30). */
export const MAX_DEPTH = 64;

/**
 * OTLP/JSON counts objects, arrays and the commas between members and items:
 * an SDK's JSON of a span counts about 18 plus 4 an attribute where protobuf
 * counts 2 plus 2, so twice protobuf's limit takes about as many attributes
 * (some 59 a span for 1,024 spans) and holds at most MAX_ELEMENTS objects, the
 * same memory. A level of nesting is an object and an array.
 */
export const MAX_JSON_ELEMENTS = 2 * MAX_ELEMENTS;
export const MAX_JSON_DEPTH = 2 * MAX_DEPTH;

export type Shape = { elements: number; spans: number };

function tooMany(what: string, limit: number): ApiError {
  return new ApiError(
    "PAYLOAD_TOO_LARGE",
    `The export holds more than ${limit} ${what}; no real export does. Export smaller batches.`,
    { limit_elements: limit },
  );
}

function tooDeep(limit: number): ApiError {
  return new ApiError("INVALID_REQUEST", `The export nests deeper than ${limit} levels; no real export does.`, {
    limit_depth: limit,
  });
}

const invalid = (at: number, why: string) =>
  new ApiError("INVALID_PROTOBUF", `The body is not a protobuf ExportTraceServiceRequest (${why} at byte ${at}).`);

/**
 * The wire shape of a message type and those it holds: for each type, by field
 * number, the type of a message field (an index), REPEATED for a repeated
 * scalar, or absent (-1). Built once from the same definitions the decoder uses.
 */
export type WireSchema = { fields: Int16Array[]; span: number };

const REPEATED = -2;

export function wireSchema(root: protobuf.Type, spanType: protobuf.Type): WireSchema {
  const types: protobuf.Type[] = [];
  const index = new Map<protobuf.Type, number>();
  const visit = (type: protobuf.Type) => {
    if (index.has(type)) return;
    index.set(type, types.length);
    types.push(type);
    for (const field of type.fieldsArray) {
      const child = field.resolve().resolvedType;
      if (child && "fieldsArray" in child) visit(child as protobuf.Type);
    }
  };
  visit(root);
  const fields = types.map((type) => {
    const table = new Int16Array(Math.max(0, ...type.fieldsArray.map((f) => f.id)) + 1).fill(-1);
    for (const field of type.fieldsArray) {
      const child = field.resolvedType;
      // protobufjs decodes a message field only when it comes length-delimited (wire type 2), as the scan counts it.
      if (child && "fieldsArray" in child) table[field.id] = index.get(child as protobuf.Type)!;
      else if (field.repeated) table[field.id] = REPEATED;
    }
    return table;
  });
  return { fields, span: index.get(spanType) ?? -1 };
}

/**
 * Counts a protobuf body's messages and repeated values, and its spans, as the
 * decoder would meet them, without decoding: tags and lengths only, strings
 * and bytes skipped by their length. Throws (typed) at the first element over
 * the limit, the first level too deep, or wire data protobufjs would refuse.
 */
export function scanProtobuf(body: Uint8Array, schema: WireSchema): Shape {
  const { fields } = schema;
  const ends = new Int32Array(MAX_DEPTH + 1);
  const types = new Int32Array(MAX_DEPTH + 1);
  let depth = 0;
  let type = 0;
  let end = body.length;
  let pos = 0;
  let elements = 0;
  let spans = 0;
  // A varint as a number (exact up to 2^53; lengths and tags never come near).
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i += 1) {
      if (pos >= end) throw invalid(pos, "a varint runs past the end of its message");
      const b = body[pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw invalid(pos, "a varint longer than 10 bytes");
  };
  for (;;) {
    if (pos >= end) {
      if (depth === 0) break;
      depth -= 1;
      end = ends[depth]!;
      type = types[depth]!;
      continue;
    }
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 0) throw invalid(pos, "field number 0");
    const table = fields[type]!;
    const kind = field < table.length ? table[field]! : -1;
    if (kind === REPEATED && (elements += 1) > MAX_ELEMENTS) throw tooMany("elements", MAX_ELEMENTS);
    if (wire === 0) varint();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const length = varint();
      if (length > end - pos) throw invalid(pos, "a length past the end of its message");
      if (kind < 0) {
        pos += length;
        continue;
      }
      if ((elements += 1) > MAX_ELEMENTS) throw tooMany("elements", MAX_ELEMENTS);
      if (kind === schema.span) spans += 1;
      if (depth === MAX_DEPTH) throw tooDeep(MAX_DEPTH);
      ends[depth] = end;
      types[depth] = type;
      depth += 1;
      end = pos + length;
      type = kind;
    } else throw invalid(pos, `wire type ${wire}, which OTLP does not use`);
    if (pos > end) throw invalid(pos, "a value past the end of its message");
  }
  return { elements, spans };
}

/**
 * Index of the quote that closes the JSON string opened at `open`, or -1. Most
 * strings (keys, ids) are short: read byte by byte; a long one by the native
 * search, each quote it finds checked for the backslashes before it.
 */
function closingQuote(text: Buffer, open: number): number {
  let i = open + 1;
  for (const stop = Math.min(text.length, i + 32); i < stop; i += 1) {
    const c = text[i];
    if (c === 0x22) return i;
    if (c === 0x5c) i += 1;
  }
  let at = i < text.length ? text.indexOf(0x22, i) : -1;
  while (at > 0) {
    let slashes = 0;
    while (text[at - 1 - slashes] === 0x5c) slashes += 1;
    if (slashes % 2 === 0) return at;
    at = text.indexOf(0x22, at + 1);
  }
  return -1;
}

export type JsonShape = { elements: number; depth: number; over: "elements" | "depth" | null };

/**
 * Counts a JSON text's objects, arrays and commas, and its nesting, outside
 * strings, stopping at the first over either limit. Read as UTF-8 bytes (no
 * string is made of a body that may be refused; no byte of a multi-byte
 * character is punctuation). Text that is not JSON is counted as far as it
 * goes: JSON.parse says what is wrong with it.
 */
export function jsonShape(json: Uint8Array | string, maxElements: number, maxDepth: number): JsonShape {
  const text =
    typeof json === "string" ? Buffer.from(json, "utf8") : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  let depth = 0;
  let deepest = 0;
  let elements = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === 0x22) {
      const close = closingQuote(text, i);
      if (close < 0) break;
      i = close;
    } else if (c === 0x7b || c === 0x5b) {
      elements += 1;
      depth += 1;
      if (depth > deepest) deepest = depth;
      if (depth > maxDepth) return { elements, depth: deepest, over: "depth" };
      if (elements > maxElements) return { elements, depth: deepest, over: "elements" };
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
    else if (c === 0x2c && (elements += 1) > maxElements) return { elements, depth: deepest, over: "elements" };
  }
  return { elements, depth: deepest, over: null };
}

/** Refuses an OTLP/JSON body with more elements or deeper nesting than any real export, before JSON.parse. */
export function scanJson(body: Uint8Array): void {
  const shape = jsonShape(body, MAX_JSON_ELEMENTS, MAX_JSON_DEPTH);
  if (shape.over === "elements") throw tooMany("JSON elements (objects, arrays, members and items)", MAX_JSON_ELEMENTS);
  if (shape.over === "depth") throw tooDeep(MAX_JSON_DEPTH);
}
