import "server-only";
import type { Db } from "../db/client";
import { spanAdapters, spanRecords, type SpanOptions, type SpanRecord } from "./conventions";
import { SpanProblem } from "./span-records";
import {
  isRecord,
  ingestPrepared,
  type IngestResult,
  type PreparedInput,
  type RuntimeRef,
  type RecordProblem,
  type VolatileArgsOf,
} from "../ingest";
import type { CatalogOnce } from "../catalog/load";
import type { ReadSpan } from "./read-spans";
import type { PreparedRecord } from "../write/prepared-record";
import { argsDigest } from "../write/args-digest";
import { cleanText, redact, TooDeepError } from "../redact/redact";
import { stringifyExactJson } from "../json/exact";

// OTLP ingest's records: each tool-call span, read by the convention that
// claims it (lib/otlp/conventions/), becomes its intent and outcome
// records, prepared like any ingest record (ids cleaned, the span as
// evidence with secrets redacted) and stored through the same path
// (process-batch.ts), so a bad span is rejected alone. Other spans (chat,
// agent, chains, model calls) are counted and left alone.

export type SpanIngestResult = {
  /** Tool-call spans read. */
  toolSpans: number;
  /** Spans that are not tool calls, ignored. */
  ignoredSpans: number;
  /** Tool-call spans Settle could not store (nothing of them was). */
  rejectedSpans: number;
  /** Why, for the first few rejected spans. */
  reasons: string[];
  records: IngestResult;
};

const MAX_REASONS = 5;

/** A span's stored evidence at most, as envelope ingest's whole body is. */
export const MAX_EVIDENCE_BYTES = 1024 * 1024;
// Evidence parts left out, in this order, until it fits: the largest and least read first.
const DROPPABLE = ["events", "attributes", "result", "arguments"] as const;

/**
 * Could this span's evidence exceed its limit? An upper bound from what was read (the span's texts,
 * and the service and scope names its evidence repeats), so most spans are never serialized to be
 * measured: a character is at most 6 bytes of JSON (\u0001), a value's punctuation and key well under 64.
 */
function mayExceed({ span, source }: ReadSpan): boolean {
  const service = source.resource["service.name"];
  const characters =
    span.reading.characters + (typeof service === "string" ? service.length : 0) + (source.scope.name?.length ?? 0);
  return 6 * characters + 64 * span.reading.values + 64 * 1024 > MAX_EVIDENCE_BYTES;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(stringifyExactJson(value));

/** The evidence cut to MAX_EVIDENCE_BYTES, saying in `truncated` what was left out. */
export function fitEvidence(envelope: unknown): unknown {
  if (!isRecord(envelope) || jsonBytes(envelope) <= MAX_EVIDENCE_BYTES) return envelope;
  const notes = Array.isArray(envelope.truncated) ? envelope.truncated.filter((n) => typeof n === "string") : [];
  const fitted: Record<string, unknown> = Object.assign({}, envelope, { truncated: notes });
  for (const key of DROPPABLE) {
    if (fitted[key] === undefined || fitted[key] === null) continue;
    fitted[key] = null;
    notes.push(`${key} left out: the span's evidence was over ${MAX_EVIDENCE_BYTES} bytes`);
    if (jsonBytes(fitted) <= MAX_EVIDENCE_BYTES) return fitted;
  }
  // Still over (a name and messages of 64 KiB each): the span's ids are what is kept.
  const otel = isRecord(envelope.otel) ? envelope.otel : {};
  notes.push(`only the span's ids kept: its evidence was over ${MAX_EVIDENCE_BYTES} bytes`);
  return {
    otel: { convention: otel.convention, trace_id: otel.trace_id, span_id: otel.span_id },
    tool_call_id: null,
    truncated: notes,
  };
}

function prepareSpanRecord(
  r: SpanRecord,
  argsDigest: string | null,
  args: unknown,
  large: boolean,
): PreparedRecord | RecordProblem {
  const tool = cleanText(r.tool);
  let envelope: unknown;
  let storedArgs: unknown = null;
  try {
    envelope = redact(r.envelope);
    if (large) envelope = fitEvidence(envelope);
    // Kept with the intent (a span that has ended carries them in its outcome's evidence only).
    if (r.phase === "intent" && args !== null && args !== undefined) storedArgs = redact(args);
  } catch (error) {
    if (error instanceof TooDeepError)
      return { code: "ENVELOPE_TOO_DEEP", message: `the span's attributes are ${error.message}.`, path: "attributes" };
    throw error;
  }
  return {
    eventKey: r.eventId,
    eventId: r.eventId,
    taskId: cleanText(r.taskId),
    invocationId: cleanText(r.invocationId),
    attemptId: r.attemptId,
    attemptNo: null,
    tool,
    phase: r.phase,
    at: r.at,
    effectClass: r.effectClass,
    idempotencyKey: null,
    budgetLeftS: null,
    argsDigest,
    arguments: storedArgs,
    summary: null,
    normalized: r.normalized,
    probeResult: null,
    envelope,
  };
}

type SpanInputs = { span: ReadSpan; first: number; count: number } | { span: ReadSpan; problem: string };

/** Ingests the tool-call spans of one export for a runtime. */
export async function ingestSpans(
  db: Db,
  runtime: RuntimeRef,
  spans: ReadSpan[],
  options: SpanOptions & { volatileArgs?: VolatileArgsOf; catalog?: CatalogOnce },
): Promise<SpanIngestResult> {
  const inputs: PreparedInput[] = [];
  const read: SpanInputs[] = [];
  let ignoredSpans = 0;
  for (const item of spans) {
    const adapter = spanAdapters.find((a) => a.detect(item.span));
    if (!adapter) {
      ignoredSpans += 1;
      continue;
    }
    if (item.problems.length > 0) {
      read.push({ span: item, problem: item.problems.join("; ") });
      continue;
    }
    let records: SpanRecord[];
    try {
      records = spanRecords(adapter, item.span, item.source, options);
    } catch (error) {
      if (error instanceof SpanProblem) {
        read.push({ span: item, problem: error.message });
        continue;
      }
      // Whatever went wrong reading one span is that span's problem only.
      console.error("[settle] a span could not be read:", error);
      read.push({ span: item, problem: "Settle could not read this span" });
      continue;
    }
    read.push({ span: item, first: inputs.length, count: records.length });
    // One digest for the span's records: the arguments are the same at its start and end. Settle's
    // digest (lib/write/args-digest.ts), without the tool's volatile arguments, as for any record.
    const args = records.map((r) => r.envelope.arguments).find((a) => a !== null && a !== undefined);
    const digest =
      args === undefined || records[0] === undefined ? null : argsDigest(args, options.volatileArgs?.(records[0].tool));
    const large = mayExceed(item);
    for (const r of records)
      inputs.push({ prepared: prepareSpanRecord(r, digest, args, large), givenEventId: r.eventId });
  }
  const result =
    inputs.length > 0
      ? await ingestPrepared(db, runtime, inputs, options.catalog)
      : { results: [], accepted: 0, duplicates: 0, rejected: 0 };
  const reasons: string[] = [];
  let rejectedSpans = 0;
  for (const entry of read) {
    const problem =
      "problem" in entry
        ? entry.problem
        : result.results.slice(entry.first, entry.first + entry.count).find((r) => r.status === "rejected")?.error
            ?.agent_message;
    if (problem === undefined) continue;
    rejectedSpans += 1;
    const { traceId, spanId } = entry.span.span;
    if (reasons.length < MAX_REASONS)
      reasons.push(`span ${spanId || "(no id)"} of trace ${traceId || "(no id)"}: ${problem}`);
  }
  return { toolSpans: read.length, ignoredSpans, rejectedSpans, reasons, records: result };
}
