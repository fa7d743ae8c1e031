import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { hexId, type OtlpOutcome } from "./otlp-outcomes";

// One queued outcome as the OTLP/HTTP request body (protobuf), made by the official serializer the
// OpenTelemetry exporters send with (@opentelemetry/otlp-transformer, as @opentelemetry/exporter-trace-otlp-proto
// uses it), so a collector reads it as any exporter's. The span is a child of the call's own span, and links
// to it, when the call named its trace; otherwise it starts a trace of its own, one per call.

type ReadableSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

const SAMPLED = 1;
const SPAN_KIND_INTERNAL = 0;
const STATUS_UNSET = 0;

const hrTime = (iso: string): [number, number] => {
  const ms = Date.parse(iso);
  return [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
};

/** The span's attributes: settle.* as docs/audit.md lists them. */
export function outcomeAttributes(o: OtlpOutcome): Record<string, string> {
  const attributes: Record<string, string> = {
    "settle.commit_state": o.commit_state,
    "settle.status": o.status,
    "settle.resolution_by": o.resolution_by,
    "settle.decision": o.decision,
    "settle.reason": o.reason,
    "settle.invocation_id": o.invocation_id,
    "settle.task_id": o.task_id,
    "settle.runtime": o.runtime,
    "settle.tool": o.tool,
    "settle.console_url": o.console_url,
  };
  if (o.effect_class) attributes["settle.effect_class"] = o.effect_class;
  return attributes;
}

const resource = resourceFromAttributes({ "service.name": "settle" });

export function otlpBodyOf(o: OtlpOutcome): Uint8Array {
  const at = hrTime(o.at);
  const traceId = o.trace_id ?? hexId(`settle-trace:${o.invocation_uid}`, 32);
  const parent = o.trace_id && o.span_id ? { traceId: o.trace_id, spanId: o.span_id, traceFlags: SAMPLED } : null;
  const attributes = outcomeAttributes(o);
  const span = {
    name: `settle.${o.outcome}`,
    kind: SPAN_KIND_INTERNAL,
    spanContext: () => ({ traceId, spanId: hexId(o.event_id, 16), traceFlags: SAMPLED }),
    parentSpanContext: parent ? { ...parent, isRemote: true } : undefined,
    startTime: at,
    endTime: at,
    duration: [0, 0] as [number, number],
    ended: true,
    status: { code: STATUS_UNSET },
    attributes,
    // The call's own span, linked so a backend that shows links leads from this outcome to the tool call.
    links: parent ? [{ context: parent, attributes: { "settle.link": "tool_call" } }] : [],
    events: [{ name: `settle.${o.outcome}`, time: at, attributes }],
    resource,
    instrumentationScope: { name: "settle" },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as ReadableSpan;
  const body = ProtobufTraceSerializer.serializeRequest([span]);
  if (!body) throw new Error("the OTLP serializer made no body");
  return body;
}
