import "server-only";
import type { Db } from "../db/client";
import { effectClassFor, volatileArgsFor } from "../catalog/effect-class";
import { catalogOnce } from "../catalog/load";
import { env } from "../env";
import type { RuntimeRef } from "../ingest";
import { decodeJson, decodeProtobuf, encodeAnswer, type ExportAnswer, type OtlpEncoding } from "./decode";
import { ingestSpans, type SpanIngestResult } from "./ingest-spans";

// One OTLP trace export, from its bytes to its answer (decision 021): counted
// on the wire and decoded (decode.ts, scan.ts), read into spans (read-spans.ts),
// each tool-call span read by its convention (conventions/) into records
// (span-records.ts), stored through ingest's one entry (ingest-spans.ts), and
// answered as an ExportTraceServiceResponse in the request's own encoding.
// The HTTP side — media type, gzip, the body's limits — is read-body.ts's.

export type TraceExport = { encoding: OtlpEncoding; body: Uint8Array };
export type TraceExportAnswer = { encoding: OtlpEncoding; body: Uint8Array | string };

/** OTLP's partial_success: the rejected spans and why, and, as a warning (rejected 0), the spans that were not tool calls. */
export function answerOf(result: SpanIngestResult): ExportAnswer | null {
  if (result.rejectedSpans === 0 && result.ignoredSpans === 0) return null;
  const parts = [`${result.toolSpans - result.rejectedSpans} of ${result.toolSpans} tool-call spans stored`];
  if (result.ignoredSpans > 0) parts.push(`${result.ignoredSpans} spans are not tool calls and were ignored`);
  if (result.rejectedSpans > 0)
    parts.push(`rejected: ${result.reasons.join("; ")}${result.rejectedSpans > result.reasons.length ? "; …" : ""}`);
  return { rejectedSpans: result.rejectedSpans, errorMessage: `Settle: ${parts.join("; ")}.` };
}

/** Decodes and ingests one export for a runtime, with its tool catalog, and encodes the answer. */
export async function ingestTraceExport(db: Db, runtime: RuntimeRef, request: TraceExport): Promise<TraceExportAnswer> {
  const spans = request.encoding === "protobuf" ? decodeProtobuf(request.body) : decodeJson(request.body);
  const catalogOf = catalogOnce(db, runtime.id);
  const catalog = await catalogOf();
  const result = await ingestSpans(db, runtime, spans, {
    catalog: catalogOf,
    effectClass: (tool, toolType) => effectClassFor(catalog, tool, toolType),
    volatileArgs: (tool) => volatileArgsFor(catalog, tool),
    taskAttribute: env().SETTLE_OTLP_TASK_ATTRIBUTE ?? null,
    receivedAt: new Date(),
  });
  return { encoding: request.encoding, body: encodeAnswer(answerOf(result), request.encoding) };
}
