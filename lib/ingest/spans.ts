import "server-only";
import type { Db } from "../db/client";
import { spanAdapters, spanRecords, type SpanOptions, type SpanRecord } from "./adapters/spans";
import type { ReadSpan } from "../otlp/spans";
import { ingestPrepared, type IngestResult, type PreparedInput, type RuntimeRef } from "./process-batch";
import type { PreparedRecord, RecordProblem, VolatileArgsOf } from "./record";
import { argsDigest } from "./args-digest";
import { cleanText, redact, TooDeepError } from "../redact/redact";

// OTLP ingest's records: each tool-call span, read by the convention that
// claims it (lib/ingest/adapters/otel-*.ts), becomes its intent and outcome
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

const MAX_TOOL = 200;
const MAX_REASONS = 5;

function prepareSpanRecord(r: SpanRecord, argsDigest: string | null, args: unknown): PreparedRecord | RecordProblem {
  const tool = cleanText(r.tool.trim());
  if (tool.length === 0 || tool.length > MAX_TOOL) return { code: "INVALID_RECORD", message: `the tool name must be 1 to ${MAX_TOOL} characters.`, path: "tool" };
  let envelope: unknown;
  let storedArgs: unknown = null;
  try {
    envelope = redact(r.envelope);
    // Kept with the intent (a span that has ended carries them in its outcome's evidence only).
    if (r.phase === "intent" && args !== null && args !== undefined) storedArgs = redact(args);
  } catch (error) {
    if (error instanceof TooDeepError) return { code: "ENVELOPE_TOO_DEEP", message: `the span's attributes are ${error.message}.`, path: "attributes" };
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
    normalized: r.normalized,
    probeResult: null,
    envelope,
  };
}

type SpanInputs = { span: ReadSpan; first: number; count: number } | { span: ReadSpan; problem: string };

/** Ingests the tool-call spans of one export for a runtime. */
export async function ingestSpans(db: Db, runtime: RuntimeRef, spans: ReadSpan[], options: SpanOptions & { volatileArgs?: VolatileArgsOf }): Promise<SpanIngestResult> {
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
      // Whatever went wrong reading one span is that span's problem only.
      console.error("[settle] a span could not be read:", error);
      read.push({ span: item, problem: "Settle could not read this span" });
      continue;
    }
    read.push({ span: item, first: inputs.length, count: records.length });
    // One digest for the span's records: the arguments are the same at its start and end. Settle's
    // digest (lib/ingest/args-digest.ts), without the tool's volatile arguments, as for any record.
    const args = records.map((r) => r.envelope.arguments).find((a) => a !== null && a !== undefined);
    const digest = args === undefined || records[0] === undefined ? null : argsDigest(args, options.volatileArgs?.(records[0].tool));
    for (const r of records) inputs.push({ prepared: prepareSpanRecord(r, digest, args), givenEventId: r.eventId });
  }
  const result = inputs.length > 0 ? await ingestPrepared(db, runtime, inputs) : { results: [], accepted: 0, duplicates: 0, rejected: 0 };
  const reasons: string[] = [];
  let rejectedSpans = 0;
  for (const entry of read) {
    const problem =
      "problem" in entry
        ? entry.problem
        : result.results.slice(entry.first, entry.first + entry.count).find((r) => r.status === "rejected")?.error?.agent_message;
    if (problem === undefined) continue;
    rejectedSpans += 1;
    const { traceId, spanId } = entry.span.span;
    if (reasons.length < MAX_REASONS) reasons.push(`span ${spanId || "(no id)"} of trace ${traceId || "(no id)"}: ${problem}`);
  }
  return { toolSpans: read.length, ignoredSpans, rejectedSpans, reasons, records: result };
}
