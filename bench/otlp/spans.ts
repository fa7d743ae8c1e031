import { SpanStatusCode } from "@opentelemetry/api";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";

// The bench's traffic: batches of GenAI execute_tool spans made by the real
// OpenTelemetry SDK and serialized by its own OTLP serializers (protobuf and
// JSON), and the same calls as Settle ingest records (an intent and an
// outcome per span) for POST /api/v1/envelopes.

export type Batch = { protobuf: Uint8Array; json: Uint8Array; records: object[] };

const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": "bench-agent" }),
  spanProcessors: [new SimpleSpanProcessor(memory)],
});
const tracer = provider.getTracer("settle-bench");
const TOOLS = ["create_order", "send_invoice", "search_orders", "refund_payment"];
const nsToIso = (t: [number, number]) => new Date(t[0] * 1000 + Math.floor(t[1] / 1e6)).toISOString();

function recordsOf(span: ReadableSpan): object[] {
  const a = span.attributes;
  const trace = span.spanContext().traceId;
  const id = String(a["gen_ai.tool.call.id"]);
  const base = {
    task_id: trace,
    invocation_id: id,
    attempt_id: span.spanContext().spanId,
    tool: String(a["gen_ai.tool.name"]),
    effect_class: a["gen_ai.tool.type"] === "datastore" ? "read" : null,
  };
  const failed = span.status.code === SpanStatusCode.ERROR;
  const args = JSON.parse(String(a["gen_ai.tool.call.arguments"])) as unknown;
  return [
    {
      ...base,
      event_id: `env:${trace}:${span.spanContext().spanId}:intent`,
      phase: "intent",
      at: nsToIso(span.startTime),
    },
    {
      ...base,
      event_id: `env:${trace}:${span.spanContext().spanId}:outcome`,
      phase: "outcome",
      at: nsToIso(span.endTime),
      envelope: failed
        ? { ok: false, code: "timeout", commit_state: "unknown", agent_message: span.status.message, arguments: args }
        : {
            ok: true,
            commit_state: "committed",
            result: JSON.parse(String(a["gen_ai.tool.call.result"] ?? "null")) as unknown,
            arguments: args,
          },
    },
  ];
}

/** `count` batches of `size` tool spans each, every span new (so nothing is a duplicate). */
export function makeBatches(count: number, size: number, run: string): Batch[] {
  const batches: Batch[] = [];
  for (let b = 0; b < count; b += 1) {
    tracer.startActiveSpan(`invoke_agent bench`, (root) => {
      for (let i = 0; i < size; i += 1) {
        const tool = TOOLS[i % TOOLS.length]!;
        const span = tracer.startSpan(`execute_tool ${tool}`, {
          attributes: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": `call-${run}-${b}-${i}`,
            "gen_ai.tool.type": tool === "search_orders" ? "datastore" : "function",
            "gen_ai.tool.call.arguments": JSON.stringify({ order_id: `o-${b}-${i}`, amount_cents: 100 + i }),
          },
        });
        if (i % 5 === 4)
          span
            .setAttribute("error.type", "timeout")
            .setStatus({ code: SpanStatusCode.ERROR, message: "upstream timed out" });
        else
          span
            .setAttribute("gen_ai.tool.call.result", JSON.stringify({ ok: true, id: `r-${b}-${i}` }))
            .setStatus({ code: SpanStatusCode.OK });
        span.end();
      }
      root.end();
    });
    // The root (an agent span) is not a tool call: left out, so every span in a batch is one.
    const spans = memory.getFinishedSpans().filter((s) => s.name.startsWith("execute_tool"));
    memory.reset();
    batches.push({
      protobuf: ProtobufTraceSerializer.serializeRequest(spans)!,
      json: JsonTraceSerializer.serializeRequest(spans)!,
      records: spans.flatMap(recordsOf),
    });
  }
  return batches;
}
