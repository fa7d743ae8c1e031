import Long from "long";
import protobuf from "protobufjs/light";
import descriptor from "./trace-service.json";
import { ApiError } from "../errors";
import { scanJson, scanProtobuf, wireSchema } from "./scan";
import { countSpans, spansOf, type ReadSpan } from "./read-spans";

// OTLP/HTTP trace bodies into spans. Protobuf is decoded by protobufjs from
// the official OpenTelemetry definitions (vendored in ./vendor, v1.11.0;
// ./vendor/README.md), never by hand. Every failure to read a body is a 400
// the caller can act on; a span's own problems reject that span only.

export const MAX_SPANS = 1024;

// int64s as Long, explicitly: protobufjs finds it by a dynamic require a bundle
// may not keep, and would then read nanosecond times as lossy doubles.
protobuf.util.Long = Long;
protobuf.configure();

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const ExportRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const ExportResponse = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse");
const wire = wireSchema(ExportRequest, root.lookupType("opentelemetry.proto.trace.v1.Span"));

export type OtlpEncoding = "protobuf" | "json";

function tooMany(count: number): ApiError {
  return new ApiError(
    "TOO_MANY_RECORDS",
    `${count} spans in one export; the limit is ${MAX_SPANS}. Export smaller batches (the SDK's default is 512).`,
    {
      limit_spans: MAX_SPANS,
      spans: count,
    },
  );
}

function read(request: unknown): ReadSpan[] {
  const count = countSpans(request);
  if (count > MAX_SPANS) throw tooMany(count);
  const spans = spansOf(request);
  if (!Array.isArray(spans))
    throw new ApiError(
      "INVALID_REQUEST",
      `Not an OTLP ExportTraceServiceRequest: ${spans.path ? `${spans.path} ` : ""}${spans.message}.`,
      { path: spans.path },
    );
  return spans;
}

export function decodeProtobuf(body: Uint8Array): ReadSpan[] {
  // Counted first: a body of more elements than any real export is refused before one is built.
  const { spans } = scanProtobuf(body, wire);
  if (spans > MAX_SPANS) throw tooMany(spans);
  let message: protobuf.Message;
  try {
    message = ExportRequest.decode(body);
  } catch (error) {
    // Truncated (index out of range) or not protobuf at all (invalid wire type): the body's fault.
    throw new ApiError(
      "INVALID_PROTOBUF",
      `The body is not a protobuf ExportTraceServiceRequest (${error instanceof Error ? error.message : "decode error"}).`,
    );
  }
  return read(message);
}

export function decodeJson(body: Uint8Array): ReadSpan[] {
  scanJson(body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch (error) {
    throw new ApiError(
      "INVALID_JSON",
      `The body is not valid JSON: ${error instanceof Error ? error.message : "parse error"}.`,
    );
  }
  return read(parsed);
}

export type ExportAnswer = { rejectedSpans: number; errorMessage: string };

/** ExportTraceServiceResponse: partial_success only when there is something to say (OTLP: a warning has rejected 0). */
export function encodeAnswer(answer: ExportAnswer | null, encoding: OtlpEncoding): Uint8Array | string {
  const body = answer
    ? { partialSuccess: { rejectedSpans: answer.rejectedSpans, errorMessage: answer.errorMessage } }
    : {};
  if (encoding === "json") return JSON.stringify(body);
  return ExportResponse.encode(ExportResponse.fromObject(body)).finish();
}

/** For tests and the bench: an ExportTraceServiceResponse read back. */
export function decodeAnswer(body: Uint8Array): {
  partialSuccess?: { rejectedSpans?: string | number; errorMessage?: string };
} {
  return ExportResponse.toObject(ExportResponse.decode(body), { longs: Number }) as never;
}
