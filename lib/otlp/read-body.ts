import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { ApiError, type ErrorCode } from "../errors";
import type { RuntimePrincipal } from "../identity/principal";
import { MAX_SPANS, type OtlpEncoding } from "./decode";
import { ingestTraceExport, type TraceExport } from "./export";
import { MAX_DEPTH, MAX_ELEMENTS, MAX_JSON_DEPTH, MAX_JSON_ELEMENTS } from "./scan";
import { MAX_BODY_BYTES } from "../ingest";
import { readBodyBytes } from "../http/read-body";

// OTLP/HTTP trace export (POST /v1/traces, and the same under /api/v1/otlp),
// its HTTP side: the media type, gzip, the body read under envelope ingest's
// limit (1 MiB as sent; a gzip body may inflate to 8 MiB), and the answer as a
// Response. What the export means is lib/otlp/export.ts's. Failures before
// any span is read answer with Settle's error envelope (JSON, as its
// Content-Type says), which exporters read by status code: 400 and 413 are
// not retried, 429 and 503 are.

export const MAX_INFLATED_BYTES = 8 * 1024 * 1024;

const MEDIA: Record<string, OtlpEncoding> = {
  "application/x-protobuf": "protobuf",
  "application/protobuf": "protobuf",
  "application/json": "json",
};
const CONTENT_TYPE: Record<OtlpEncoding, string> = { protobuf: "application/x-protobuf", json: "application/json" };

function encodingOf(req: Request): OtlpEncoding {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const encoding = Object.hasOwn(MEDIA, type) ? MEDIA[type] : undefined;
  if (!encoding)
    throw new ApiError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content-Type ${type || "(none)"} is not accepted; an OTLP/HTTP exporter sends application/x-protobuf or application/json.`,
    );
  return encoding;
}

function gzipped(req: Request): boolean {
  const coding = (req.headers.get("content-encoding") ?? "").trim().toLowerCase();
  if (coding === "" || coding === "identity") return false;
  if (coding === "gzip" || coding === "x-gzip") return true;
  throw new ApiError(
    "UNSUPPORTED_MEDIA_TYPE",
    `Content-Encoding ${coding} is not accepted; send the body as is or gzip-compressed (OTEL_EXPORTER_OTLP_COMPRESSION=gzip).`,
  );
}

/** The export's encoding and its bytes (inflated), within the limits. */
export async function readTraceExport(req: Request): Promise<TraceExport> {
  const encoding = encodingOf(req);
  const body = await readBodyBytes(req, {
    maxBytes: MAX_BODY_BYTES,
    advice: "Export smaller batches, or compress them (gzip).",
    ...(gzipped(req) ? { gzip: { maxInflatedBytes: MAX_INFLATED_BYTES } } : {}),
  });
  return { encoding, body };
}

/** Reads one trace export, has lib/otlp ingest it, and answers it in its own encoding. */
export async function answerTraceExport(db: Db, principal: RuntimePrincipal, req: Request): Promise<Response> {
  const answer = await ingestTraceExport(db, principal.runtime, await readTraceExport(req));
  return new Response(typeof answer.body === "string" ? answer.body : new Uint8Array(answer.body), {
    status: 200,
    headers: { "content-type": CONTENT_TYPE[answer.encoding], "cache-control": "no-store" },
  });
}

/** What both routes declare (server/routes.ts lists both). */
export const traceExportRoute = {
  auth: "runtime" as const,
  summary: "Ingest OpenTelemetry traces (OTLP/HTTP)",
  description:
    `What an OpenTelemetry exporter sends: an ExportTraceServiceRequest as application/x-protobuf or application/json (ids in hex), gzip or not. ` +
    `Body at most ${MAX_BODY_BYTES} bytes as sent (${MAX_INFLATED_BYTES} once decompressed), at most ${MAX_SPANS} spans, ` +
    `counted before it is decoded: at most ${MAX_ELEMENTS} elements (messages and repeated values; ${MAX_JSON_ELEMENTS} objects, arrays and commas in JSON), nested at most ${MAX_DEPTH} levels (${MAX_JSON_DEPTH} in JSON). ` +
    "Of each span at most 128 attributes, events and array items are read, texts cut at 65,536 characters; its stored evidence is at most 1 MiB, with `truncated` saying what was left out. " +
    "Each tool-call span (GenAI execute_tool and MCP tools/call, Vercel AI SDK ai.toolCall, OpenInference TOOL) becomes an invocation's intent and outcome; " +
    "other spans are counted and ignored. Answers an ExportTraceServiceResponse in the request's encoding; partialSuccess names rejected spans. Idempotent by span id.",
  tags: ["Ingest"],
  errors: [
    "INVALID_JSON",
    "INVALID_PROTOBUF",
    "INVALID_ENCODING",
    "UNSUPPORTED_MEDIA_TYPE",
    "PAYLOAD_TOO_LARGE",
    "TOO_MANY_RECORDS",
  ] satisfies ErrorCode[],
  requestContent: {
    "application/x-protobuf": z
      .string()
      .describe("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest, protobuf-encoded."),
    "application/json": z
      .object({ resourceSpans: z.array(z.unknown()).optional() })
      .describe("ExportTraceServiceRequest in OTLP/JSON."),
  },
  response: {
    200: {
      description: "ExportTraceServiceResponse, in the request's encoding.",
      schema: z.object({
        partialSuccess: z.object({ rejectedSpans: z.number().int(), errorMessage: z.string() }).optional(),
      }),
      content: {
        "application/x-protobuf": z
          .string()
          .describe("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse, protobuf-encoded."),
      },
    },
  },
};
