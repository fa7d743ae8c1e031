import { expect } from "vitest";
import { readSpan, type SpanSource } from "../read-spans";
import type { EffectClass, NormalizedAttempt } from "../../outcome/vocabulary";
import { effectClassFor, type ToolCatalogEntry } from "../../catalog/effect-class";
import { spanAdapters, spanRecords, type SpanRecord } from "../conventions";

// Tool-call spans as the real exporters write them in OTLP/JSON
// (shared/notes/otel-tool-spans.md): attributes as KeyValue lists, times as
// strings of nanoseconds, ids as hex, status codes as numbers.

export const TRACE = "5b8efff798038103d269b633813fc60c";
export const SPAN = "eee19b7ec3c1b174";
export const PARENT = "eee19b7ec3c1b173";
export const START_NS = "1764655924123000000";
export const END_NS = "1764655924623000000";
export const START = new Date(1764655924123).toISOString();
export const END = new Date(1764655924623).toISOString();

type Attr = string | number | boolean;
const value = (v: Attr) =>
  typeof v === "string"
    ? { stringValue: v }
    : typeof v === "boolean"
      ? { boolValue: v }
      : Number.isInteger(v)
        ? { intValue: v }
        : { doubleValue: v };
export const kv = (attrs: Record<string, Attr>) => Object.entries(attrs).map(([key, v]) => ({ key, value: value(v) }));

export type RawSpan = {
  name: string;
  kind?: number;
  attributes: Record<string, Attr>;
  status?: { code?: number; message?: string };
  events?: Array<{ name: string; attributes: Record<string, Attr> }>;
  end?: boolean;
};

export function otlpSpan(s: RawSpan): Record<string, unknown> {
  return {
    traceId: TRACE,
    spanId: SPAN,
    parentSpanId: PARENT,
    name: s.name,
    kind: s.kind ?? 1,
    startTimeUnixNano: START_NS,
    endTimeUnixNano: s.end === false ? "0" : END_NS,
    attributes: kv(s.attributes),
    status: s.status ?? {},
    events: (s.events ?? []).map((e) => ({ timeUnixNano: END_NS, name: e.name, attributes: kv(e.attributes) })),
  };
}

export const SOURCE: SpanSource = {
  resource: { "service.name": "billing-agent" },
  scope: { name: "test", version: null },
};

export type SpanCase = {
  name: string;
  span: RawSpan;
  catalog?: ToolCatalogEntry[];
  taskAttribute?: string;
  /** null: not a tool call, ignored. */
  expect: null | {
    convention: string;
    tool: string;
    invocationId: string;
    taskId?: string;
    effectClass?: EffectClass | null;
    /** The outcome record's reading (fields named only); absent: the span has not ended. */
    outcome?: Partial<NormalizedAttempt>;
    arguments?: unknown;
    result?: unknown;
  };
};

export function checkSpan(c: SpanCase): SpanRecord[] {
  const read = readSpan(otlpSpan(c.span), SOURCE);
  expect(read.problems).toEqual([]);
  const adapter = spanAdapters.find((a) => a.detect(read.span));
  if (c.expect === null) {
    expect(adapter?.convention ?? null).toBeNull();
    return [];
  }
  expect(adapter?.convention).toBe(c.expect.convention);
  const records = spanRecords(adapter!, read.span, SOURCE, {
    effectClass: (tool, type) => effectClassFor(c.catalog ?? [], tool, type),
    taskAttribute: c.taskAttribute ?? null,
    receivedAt: new Date(END),
  });
  const [intent, outcome] = records;
  expect(intent).toMatchObject({
    phase: "intent",
    at: START,
    eventId: `otel:${TRACE}:${SPAN}:intent`,
    attemptId: SPAN,
    tool: c.expect.tool,
    invocationId: c.expect.invocationId,
    taskId: c.expect.taskId ?? TRACE,
  });
  expect(intent!.normalized).toMatchObject({
    dialect: c.expect.convention,
    commit_state: "unknown",
    dispatch_stage: "pre_dispatch",
  });
  if ("effectClass" in c.expect) expect(intent!.effectClass).toBe(c.expect.effectClass);
  if (c.expect.outcome === undefined) {
    expect(records).toHaveLength(1);
    return records;
  }
  expect(records).toHaveLength(2);
  expect(outcome).toMatchObject({
    phase: "outcome",
    at: END,
    eventId: `otel:${TRACE}:${SPAN}:outcome`,
    invocationId: c.expect.invocationId,
  });
  const picked = Object.fromEntries(
    Object.keys(c.expect.outcome).map((k) => [k, outcome!.normalized[k as keyof NormalizedAttempt]]),
  );
  expect(picked).toEqual(c.expect.outcome);
  expect(outcome!.normalized.safe_details).toMatchObject({
    "otel.convention": c.expect.convention,
    "otel.trace_id": TRACE,
    "otel.span_id": SPAN,
    "service.name": "billing-agent",
  });
  const evidence = outcome!.envelope as { otel: Record<string, unknown>; arguments: unknown; result: unknown };
  expect(evidence.otel).toMatchObject({
    convention: c.expect.convention,
    trace_id: TRACE,
    span_id: SPAN,
    parent_span_id: PARENT,
    service_name: "billing-agent",
  });
  if ("arguments" in c.expect) expect(evidence.arguments).toEqual(c.expect.arguments);
  if ("result" in c.expect) expect(evidence.result).toEqual(c.expect.result);
  return records;
}
