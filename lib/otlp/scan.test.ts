import { SpanStatusCode } from "@opentelemetry/api";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import descriptor from "./trace-service.json";
import { decodeJson, decodeProtobuf } from "./decode";
import {
  jsonShape,
  MAX_DEPTH,
  MAX_ELEMENTS,
  MAX_JSON_DEPTH,
  MAX_JSON_ELEMENTS,
  scanProtobuf,
  wireSchema,
} from "./scan";
import { ApiError } from "../errors";

// The count before the decode: bodies of more elements, or deeper nesting,
// than any real export are refused before protobufjs or JSON.parse builds
// anything; what passes is counted as the decoder meets it.

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const Request = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const schema = wireSchema(Request as never, root.lookupType("opentelemetry.proto.trace.v1.Span") as never);

function refusal(fn: () => unknown): { code: string; details: Record<string, unknown> } | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (error instanceof ApiError) return { code: error.code, details: error.safeDetails };
    throw error;
  }
}

const varint = (n: number) => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
};
/** A length-delimited field: tag, varint length, bytes. */
function field(id: number, bytes: Uint8Array | number[]): Buffer {
  const body = Buffer.from(bytes);
  return Buffer.concat([Buffer.from(varint(id * 8 + 2)), Buffer.from(varint(body.length)), body]);
}
/** `bottom` inside `levels` repetitions of the fields `ids` (outermost first), written in one pass. */
function nested(ids: number[], levels: number, bottom: Buffer): Buffer {
  const headers: number[][] = [];
  let size = bottom.length;
  for (let level = 0; level < levels; level += 1) {
    for (const id of [...ids].reverse()) {
      const header = [...varint(id * 8 + 2), ...varint(size)];
      headers.push(header);
      size += header.length;
    }
  }
  return Buffer.concat([Buffer.from(headers.reverse().flat()), bottom]);
}
/** One span (field 2 of ScopeSpans) in one ScopeSpans in one ResourceSpans. */
const inOneSpan = (spanBody: Buffer) => field(1, field(2, field(2, spanBody)));

/** Every message and repeated value protobufjs built, counted on the decoded object. */
function decodedElements(message: unknown): number {
  let n = 0;
  const stack: unknown[] = [message];
  while (stack.length > 0) {
    const m = stack.pop();
    if (m instanceof Uint8Array || typeof m !== "object" || m === null) continue;
    for (const value of Object.values(m)) {
      if (Array.isArray(value)) {
        n += value.length;
        stack.push(...value);
      } else if (value && typeof value === "object" && !(value instanceof Uint8Array) && !("low" in value)) {
        n += 1;
        stack.push(value);
      }
    }
  }
  return n;
}

describe("what a real export may hold", () => {
  it("the OpenTelemetry SDK's export of 1,024 spans of 56 attributes each passes in both encodings", () => {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "agent" }),
      spanProcessors: [new SimpleSpanProcessor(memory)],
    });
    const tracer = provider.getTracer("scan-test");
    for (let i = 0; i < 1024; i += 1) {
      const attributes = Object.fromEntries(
        Array.from({ length: 56 }, (_, j) => [`attr.${j}`, j % 2 === 0 ? `value ${i}` : j]),
      );
      tracer.startSpan(`execute_tool t${i}`, { attributes }).setStatus({ code: SpanStatusCode.OK }).end();
    }
    const spans = memory.getFinishedSpans();
    expect(decodeProtobuf(ProtobufTraceSerializer.serializeRequest(spans)!)).toHaveLength(1024);
    expect(decodeJson(JsonTraceSerializer.serializeRequest(spans)!)).toHaveLength(1024);
  });
});

describe("the protobuf wire scan", () => {
  it("refuses the issue's bomb (8 MiB of empty KeyValues, `0a 00`) as too large, before decoding", () => {
    const bomb = Buffer.alloc(8 * 1024 * 1024, Buffer.from([0x0a, 0x00]));
    expect(refusal(() => decodeProtobuf(bomb))).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      details: { limit_elements: MAX_ELEMENTS },
    });
  });

  it("refuses one span's arrayValue of 4 M empty values", () => {
    const empties = Buffer.alloc(2 * 4_000_000, Buffer.from([0x0a, 0x00]));
    const kv = Buffer.concat([field(1, Buffer.from("k")), field(2, field(5, empties))]);
    const body = inOneSpan(Buffer.concat([field(1, Buffer.alloc(16, 1)), field(2, Buffer.alloc(8, 1)), field(9, kv)]));
    expect(refusal(() => decodeProtobuf(body))?.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("counts repeated strings too (a Resource's entity refs)", () => {
    const keys = Buffer.alloc(2 * (MAX_ELEMENTS + 1), Buffer.from([0x1a, 0x00]));
    const body = field(1, field(1, field(3, keys)));
    expect(refusal(() => decodeProtobuf(body))?.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("refuses AnyValues nested 100,000 deep as too deep, without a walk of the nesting", () => {
    // AnyValue → kvlistValue → KeyValue → value → …
    const value = nested([6, 1, 2], 100_000, field(1, Buffer.from("bottom")));
    const body = inOneSpan(field(9, Buffer.concat([field(1, Buffer.from("k")), field(2, value)])));
    expect(refusal(() => decodeProtobuf(body))).toEqual({
      code: "INVALID_REQUEST",
      details: { limit_depth: MAX_DEPTH },
    });
  });

  it("counts what the decoder builds: a varied export, unknown fields and mismatched wire types included", () => {
    const kv = (key: string, value: object) => ({ key, value });
    const message = Request.fromObject({
      resourceSpans: [
        {
          resource: {
            attributes: [kv("service.name", { stringValue: "svc" })],
            entityRefs: [{ type: "service", idKeys: ["a", "b"] }],
          },
          scopeSpans: [
            {
              scope: { name: "s", attributes: [kv("x", { boolValue: true })] },
              spans: [1, 2, 3].map((i) => ({
                traceId: Buffer.alloc(16, i),
                spanId: Buffer.alloc(8, i),
                name: `execute_tool t${i}`,
                attributes: [
                  kv("a", {
                    arrayValue: {
                      values: [{ intValue: 1 }, { kvlistValue: { values: [kv("d", { doubleValue: 1.5 })] } }],
                    },
                  }),
                  kv("b", { bytesValue: Buffer.from([1]) }),
                ],
                events: [{ name: "e", attributes: [kv("e", { stringValue: "v" })] }],
                links: [{ traceId: Buffer.alloc(16, 9), attributes: [kv("l", { stringValue: "w" })] }],
                status: { code: 2, message: "m" },
              })),
            },
          ],
        },
      ],
    });
    const encoded = Buffer.from(Request.encode(message).finish());
    // An unknown field (99) and a Span field sent with another wire type (attributes as a varint): both skipped, by both.
    const odd = inOneSpan(
      Buffer.concat([field(1, Buffer.alloc(16, 4)), field(99, field(1, Buffer.from("x"))), Buffer.from([0x48, 0x05])]),
    );
    const body = Buffer.concat([encoded, odd]);
    const shape = scanProtobuf(body, schema);
    expect(shape.spans).toBe(4);
    expect(shape.elements).toBe(decodedElements(Request.decode(body)));
  });

  it("refuses what protobufjs would refuse: a length past the end, a group, field 0", () => {
    const good = inOneSpan(field(1, Buffer.alloc(16, 1)));
    expect(refusal(() => scanProtobuf(good.subarray(0, good.length - 3), schema))?.code).toBe("INVALID_PROTOBUF");
    expect(refusal(() => scanProtobuf(Buffer.from([0x0b, 0x0c]), schema))?.code).toBe("INVALID_PROTOBUF");
    expect(refusal(() => scanProtobuf(Buffer.from([0x02, 0x00]), schema))?.code).toBe("INVALID_PROTOBUF");
    expect(refusal(() => scanProtobuf(Buffer.from([0x08, 0xff, 0xff]), schema))?.code).toBe("INVALID_PROTOBUF");
  });

  it("counts spans before decoding: more than the per-request limit is TOO_MANY_RECORDS", () => {
    const spans = Buffer.concat(Array.from({ length: 1025 }, () => field(2, field(5, Buffer.from("s")))));
    expect(refusal(() => decodeProtobuf(field(1, field(2, spans))))?.code).toBe("TOO_MANY_RECORDS");
  });
});

describe("the JSON scan", () => {
  it("refuses millions of tiny elements before JSON.parse", () => {
    const body = Buffer.from(`{"resourceSpans":[${"{},".repeat(2_700_000)}{}]}`);
    expect(refusal(() => decodeJson(body))).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      details: { limit_elements: MAX_JSON_ELEMENTS },
    });
    const numbers = Buffer.from(`{"resourceSpans":[{"x":[${"0,".repeat(MAX_JSON_ELEMENTS)}0]}]}`);
    expect(refusal(() => decodeJson(numbers))?.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("refuses an attribute nested 100,000 deep (kvlistValue in kvlistValue …), which the reader would otherwise cut silently", () => {
    const open = '{"kvlistValue":{"values":[{"key":"k","value":'.repeat(100_000);
    const close = "}]}}".repeat(100_000);
    const span = `{"traceId":"${"a".repeat(32)}","spanId":"${"b".repeat(16)}","name":"x","attributes":[{"key":"deep","value":${open}{"stringValue":"bottom"}${close}}]}`;
    const body = Buffer.from(`{"resourceSpans":[{"scopeSpans":[{"spans":[${span}]}]}]}`);
    expect(refusal(() => decodeJson(body))).toEqual({
      code: "INVALID_REQUEST",
      details: { limit_depth: MAX_JSON_DEPTH },
    });
  });

  it("counts punctuation outside strings only; escaped quotes do not end a string", () => {
    expect(jsonShape('{"a":"[[[{,,,","b":"x\\"[,{"}', 100, 100)).toEqual({ elements: 2, depth: 1, over: null });
    expect(jsonShape('["\\\\",[1,2]]', 100, 100)).toEqual({ elements: 4, depth: 2, over: null });
    // Past the first 32 bytes of a string, escapes are read from the quotes back.
    const long = JSON.stringify({
      a: `${'q"'.repeat(40)}[{,${"\\".repeat(3)}"`,
      b: [`${"x".repeat(40)}\\`],
      c: `${"é".repeat(50)}"]`,
    });
    expect(jsonShape(long, 100, 100)).toEqual({ elements: 4, depth: 2, over: null });
    expect(jsonShape("[[[[1]]]]", 100, 3).over).toBe("depth");
    expect(jsonShape("[1,2,3,4]", 3, 100).over).toBe("elements");
    // Not JSON: counted as far as it goes; JSON.parse says what is wrong.
    expect(jsonShape('{"open', 100, 100).over).toBeNull();
    expect(refusal(() => decodeJson(Buffer.from('{"open'))))?.toMatchObject({ code: "INVALID_JSON" });
  });
});
