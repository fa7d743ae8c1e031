import { gzipSync } from "node:zlib";
import fc from "fast-check";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorEnvelopeSchema } from "@/lib/errors";
import descriptor from "@/lib/otlp/trace-service.json";
import { decodeAnswer } from "@/lib/otlp/decode";
import { call, openSettle, type TestContext } from "./harness";
import { MAX_DEPTH, MAX_ELEMENTS } from "@/lib/otlp/scan";
import {
  deepValue,
  hostileCount,
  hostileLength,
  hostileNumber,
  hostileText,
  hostileToolName,
  hostileValue,
} from "./fuzz-inputs";
import { getInvocation, otlpTraces } from "./routes";

// Hostile OTLP trace exports, generated, against the real route: spans whose
// ids, times, kinds, statuses and attributes are anything; protobuf that is
// valid, truncated or mutated byte by byte; gzip that is not. Every answer is
// below 500, every 4xx Settle's typed envelope, every 200 an
// ExportTraceServiceResponse, and a good tool span beside hostile ones is
// stored whatever they are.

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const ExportRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");

type Answer = { status: number; body: any };
let requests = 0;

function settled(label: string, res: Answer): Answer {
  requests += 1;
  if (res.status >= 500) throw new Error(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  if (res.status >= 400 && !errorEnvelopeSchema.safeParse(res.body).success)
    throw new Error(`${label}: ${res.status} without Settle's envelope: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res;
}

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString("hex"));
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText.map((s) => ({ stringValue: s })),
  hostileNumber.map((n) => ({ intValue: n })),
  hostileNumber.map((n) => ({ doubleValue: n })),
  fc.boolean().map((b) => ({ boolValue: b })),
  fc.array(hostileText, { maxLength: 3 }).map((a) => ({ arrayValue: { values: a.map((s) => ({ stringValue: s })) } })),
  deepValue.map((v) => ({ stringValue: JSON.stringify(v) })),
  hostileValue,
);
const toolMarkers = fc.constantFrom<Record<string, unknown>[]>(
  [{ key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } }],
  [{ key: "mcp.method.name", value: { stringValue: "tools/call" } }],
  [{ key: "openinference.span.kind", value: { stringValue: "TOOL" } }],
  [
    { key: "ai.operationId", value: { stringValue: "ai.toolCall" } },
    { key: "ai.toolCall.name", value: { stringValue: "x" } },
  ],
  [],
);
const hostileKey = fc.oneof(
  hostileText,
  fc.constantFrom(
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "ai.toolCall.id",
    "gen_ai.tool.call.result",
    "ai.toolCall.result",
    "output.value",
    "input.value",
    "tool.name",
    "error.type",
    "gen_ai.tool.type",
  ),
);
const hostileSpan = fc.record(
  {
    traceId: fc.oneof(hex(16), hostileText, fc.constant("0".repeat(32))),
    spanId: fc.oneof(hex(8), hostileText),
    parentSpanId: fc.oneof(hex(8), hostileText),
    name: fc.oneof(hostileText, fc.constantFrom("ai.toolCall", "execute_tool a", "tools/call b")),
    kind: fc.oneof(fc.integer({ min: -2, max: 9 }), hostileText),
    startTimeUnixNano: fc.oneof(hostileNumber, hostileText, fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String)),
    endTimeUnixNano: fc.oneof(hostileNumber, hostileText, fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String)),
    attributes: fc
      .tuple(toolMarkers, fc.array(fc.record({ key: hostileKey, value: anyValue }), { maxLength: 6 }))
      .map(([m, rest]) => [...m, ...rest]),
    status: fc.oneof(
      fc.record(
        { code: fc.oneof(fc.integer({ min: -1, max: 4 }), hostileText), message: hostileText },
        { requiredKeys: [] },
      ),
      hostileValue,
    ),
    events: fc.oneof(
      fc.array(
        fc.record({
          name: fc.constantFrom("exception", "x"),
          attributes: fc.array(fc.record({ key: hostileKey, value: anyValue }), { maxLength: 3 }),
        }),
        { maxLength: 2 },
      ),
      hostileValue,
    ),
  },
  { requiredKeys: [] },
);

let serial = 0;
function goodSpan() {
  serial += 1;
  const id = `fz-${serial}`;
  const span = {
    traceId: "a1".repeat(16),
    spanId: (serial + 0x1000).toString(16).padStart(16, "0"),
    name: "execute_tool create_order",
    kind: 1,
    startTimeUnixNano: "1764655924123000000",
    endTimeUnixNano: "1764655924623000000",
    attributes: [
      { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
      { key: "gen_ai.tool.name", value: { stringValue: "create_order" } },
      { key: "gen_ai.tool.call.id", value: { stringValue: id } },
    ],
    status: { code: 1 },
  };
  return { id, span };
}

const exportOf = (
  spans: unknown[],
  resource: unknown = { attributes: [{ key: "service.name", value: { stringValue: "fuzz" } }] },
) => ({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: "fuzz" }, spans }] }] });

// Protobuf written by hand where protobufjs would first build what the test is about (millions of elements).
const varint = (n: number) => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
};
const field = (id: number, body: Buffer) => Buffer.concat([varint(id * 8 + 2), varint(body.length), body]);
const repeated = (tag: number, count: number) => Buffer.alloc(2 * count, Buffer.from([tag, 0x00]));
/** `bottom` inside `levels` repetitions of the fields `ids` (outermost first), written in one pass. */
function nested(ids: number[], levels: number, bottom: Buffer): Buffer {
  const headers: Buffer[] = [];
  let size = bottom.length;
  for (let level = 0; level < levels; level += 1) {
    for (const id of [...ids].reverse()) {
      const header = Buffer.concat([varint(id * 8 + 2), varint(size)]);
      headers.push(header);
      size += header.length;
    }
  }
  return Buffer.concat([...headers.reverse(), bottom]);
}
const MARKER = field(
  9,
  Buffer.concat([field(1, Buffer.from("gen_ai.operation.name")), field(2, field(1, Buffer.from("execute_tool")))]),
);
/** A tool span (its ids, the execute_tool marker, then `rest`) in a ResourceSpans of its own, with `resource` before it. */
const hostileResourceSpans = (rest: Buffer, resource = Buffer.alloc(0)) =>
  field(
    1,
    Buffer.concat([
      resource,
      field(2, field(2, Buffer.concat([field(1, Buffer.alloc(16, 3)), field(2, Buffer.alloc(8, 3)), MARKER, rest]))),
    ]),
  );

describe("hostile OTLP exports never get a 5xx, never an untyped error, never cost a good span", () => {
  let t: TestContext;
  const post = async (label: string, body: Uint8Array | string, headers: Record<string, string>) => {
    const req = new Request("http://settle.test/v1/traces", {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, ...headers },
      body: typeof body === "string" ? body : Buffer.from(body),
    });
    const res = await otlpTraces(req);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const isJson = (res.headers.get("content-type") ?? "").startsWith("application/json");
    const answer = settled(label, {
      status: res.status,
      body: isJson ? JSON.parse(Buffer.from(bytes).toString("utf8")) : bytes,
    });
    if (answer.status === 200 && !isJson) decodeAnswer(bytes);
    return answer;
  };
  const stored = async (id: string) =>
    (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).status === 200;

  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    console.log(`fuzz-otlp: ${requests} requests`);
    expect(requests).toBeGreaterThanOrEqual(700);
    await t?.teardown();
  });

  it("OTLP/JSON with hostile spans: the good tool span beside them is stored", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(hostileSpan, { minLength: 1, maxLength: 6 }),
        fc.oneof(fc.constant(undefined), hostileValue),
        async (spans, resource) => {
          const good = goodSpan();
          const res = await post("json", JSON.stringify(exportOf([...spans, good.span], resource ?? undefined)), {
            "content-type": "application/json",
          });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(await stored(good.id)).toBe(true);
        },
      ),
      { numRuns: 250 },
    );
  });

  it("OTLP/JSON bodies of any shape", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          hostileValue,
          fc.record({ resourceSpans: hostileValue }),
          fc.record({ resourceSpans: fc.array(fc.record({ scopeSpans: hostileValue, resource: hostileValue })) }),
        ),
        async (body) => {
          await post("json shape", JSON.stringify(body) ?? "null", { "content-type": "application/json" });
        },
      ),
      { numRuns: 150 },
    );
  });

  it("protobuf: valid with hostile strings, or truncated and mutated", async () => {
    const text = hostileText.map((s) => s.toWellFormed());
    const protoSpan = fc.record({
      name: text,
      kind: fc.integer({ min: 0, max: 5 }),
      key: text,
      value: text,
      status: fc.integer({ min: 0, max: 2 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(protoSpan, { maxLength: 4 }),
        fc.nat(),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
        fc.boolean(),
        async (specs, cut, flips, gzip) => {
          const good = goodSpan();
          const spans = specs.map((s, i) => ({
            traceId: Buffer.alloc(16, 7),
            spanId: Buffer.from((0x9000 + i).toString(16).padStart(16, "0"), "hex"),
            name: s.name,
            kind: s.kind,
            startTimeUnixNano: "1764655924123000000",
            endTimeUnixNano: "1764655924623000000",
            attributes: [
              { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
              { key: s.key, value: { stringValue: s.value } },
            ],
            status: { code: s.status },
          }));
          const goodProto = {
            ...good.span,
            traceId: Buffer.from(good.span.traceId, "hex"),
            spanId: Buffer.from(good.span.spanId, "hex"),
          };
          const whole = ExportRequest.encode(ExportRequest.fromObject(exportOf([...spans, goodProto]))).finish();
          const res = await post("protobuf", gzip ? gzipSync(whole) : whole, {
            "content-type": "application/x-protobuf",
            ...(gzip ? { "content-encoding": "gzip" } : {}),
          });
          expect(res.status).toBe(200);
          expect(await stored(good.id)).toBe(true);
          const mutated = Buffer.from(whole.subarray(0, whole.length === 0 ? 0 : cut % whole.length));
          for (const [at, byte] of flips) if (mutated.length > 0) mutated[at % mutated.length] = byte;
          await post("protobuf mutated", gzip ? gzipSync(mutated) : mutated, {
            "content-type": "application/x-protobuf",
            ...(gzip ? { "content-encoding": "gzip" } : {}),
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  const goodProtobuf = () => {
    const good = goodSpan();
    const proto = {
      ...good.span,
      traceId: Buffer.from(good.span.traceId, "hex"),
      spanId: Buffer.from(good.span.spanId, "hex"),
    };
    return {
      id: good.id,
      bytes: Buffer.from(ExportRequest.encode(ExportRequest.fromObject(exportOf([proto]))).finish()),
    };
  };
  const gzipHeaders = (type: string, gzip: boolean) => ({
    "content-type": type,
    ...(gzip ? { "content-encoding": "gzip" } : {}),
  });

  it("bombs: a few KB that inflate to any number of empty elements, wherever they sit — over the limit 413, unread; under it, read", async () => {
    const shapes: Record<string, (n: number) => Buffer> = {
      "resource spans": (n) => repeated(0x0a, n),
      "span attributes": (n) => hostileResourceSpans(repeated(0x4a, n)),
      "span events": (n) => hostileResourceSpans(repeated(0x5a, n)),
      "array items": (n) =>
        hostileResourceSpans(
          field(9, Buffer.concat([field(1, Buffer.from("k")), field(2, field(5, repeated(0x0a, n)))])),
        ),
      "kvlist entries": (n) =>
        hostileResourceSpans(
          field(9, Buffer.concat([field(1, Buffer.from("k")), field(2, field(6, repeated(0x0a, n)))])),
        ),
      "entity ref keys": (n) => hostileResourceSpans(Buffer.alloc(0), field(1, field(3, repeated(0x1a, n)))),
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(shapes)),
        hostileCount,
        fc.boolean(),
        async (shape, count, gzip) => {
          const good = goodProtobuf();
          const hostile = shapes[shape]!(count);
          const body = Buffer.concat([good.bytes, hostile]);
          if (body.length > 1024 * 1024 && !gzip) return;
          const res = await post(
            `bomb ${shape} ${count}`,
            gzip ? gzipSync(body) : body,
            gzipHeaders("application/x-protobuf", gzip),
          );
          // The good span's own elements (its ResourceSpans, scope, status, attributes) and the hostile span's.
          if (count > MAX_ELEMENTS) expect(res.body.code ?? res.status).toBe("PAYLOAD_TOO_LARGE");
          if (count < MAX_ELEMENTS - 64) {
            expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
            expect(await stored(good.id)).toBe(true);
          }
        },
      ),
      { numRuns: 24 },
    );
  });

  it("nesting: AnyValues in kvlists and arrays to any depth, protobuf and JSON — too deep 400, else read", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3000 }),
        fc.constantFrom("kvlist", "array"),
        fc.boolean(),
        async (levels, kind, gzip) => {
          const good = goodProtobuf();
          const ids = kind === "kvlist" ? [6, 1, 2] : [5, 1];
          const value = nested(ids, levels, field(1, Buffer.from("bottom")));
          const body = Buffer.concat([
            good.bytes,
            hostileResourceSpans(field(9, Buffer.concat([field(1, Buffer.from("deep")), field(2, value)]))),
          ]);
          const res = await post(
            `protobuf nested ${levels}`,
            gzip ? gzipSync(body) : body,
            gzipHeaders("application/x-protobuf", gzip),
          );
          // ResourceSpans, ScopeSpans, Span, KeyValue, AnyValue, then each level's messages.
          const depth = 5 + ids.length * levels;
          expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(depth > MAX_DEPTH ? 400 : 200);
          if (res.status === 200) expect(await stored(good.id)).toBe(true);

          const jsonGood = goodSpan();
          const open = (
            kind === "kvlist" ? '{"kvlistValue":{"values":[{"key":"k","value":' : '{"arrayValue":{"values":['
          ).repeat(levels);
          const close = (kind === "kvlist" ? "}]}}" : "]}}").repeat(levels);
          const deepSpan = `{"traceId":"${"3".repeat(32)}","spanId":"${"3".repeat(16)}","name":"execute_tool deep","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"deep","value":${open}{"stringValue":"bottom"}${close}}]}`;
          const text = `{"resourceSpans":[{"scopeSpans":[{"spans":[${JSON.stringify(jsonGood.span)},${deepSpan}]}]}]}`;
          const jsonRes = await post(
            `json nested ${levels}`,
            gzip ? gzipSync(text) : text,
            gzipHeaders("application/json", gzip),
          );
          if (levels >= 40) expect(jsonRes.status).toBe(400);
          if (levels <= 20) {
            expect(jsonRes.status, JSON.stringify(jsonRes.body).slice(0, 300)).toBe(200);
            expect(await stored(jsonGood.id)).toBe(true);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it("long texts anywhere in a span, and tool names around 200 characters: read, cut or refused by span, never the request", async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileLength,
        fc.constantFrom("value", "key", "name", "status", "event", "arguments"),
        hostileToolName,
        fc.boolean(),
        async (length, where, tool, gzip) => {
          const long = "é".repeat(length);
          const good = goodSpan();
          const attributes: Array<{ key: string; value: object }> = [
            { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
            { key: "gen_ai.tool.name", value: { stringValue: tool } },
            { key: where === "key" ? long : "v", value: { stringValue: where === "value" ? long : "v" } },
            ...(where === "arguments"
              ? [{ key: "gen_ai.tool.call.arguments", value: { stringValue: `{"a":"${long}"}` } }]
              : []),
          ];
          const hostile = {
            traceId: "4d".repeat(16),
            spanId: (0x7000 + serial).toString(16).padStart(16, "0"),
            name: where === "name" ? long : "execute_tool x",
            startTimeUnixNano: "1764655924123000000",
            endTimeUnixNano: "1764655924623000000",
            attributes,
            status: { code: 2, message: where === "status" ? long : "m" },
            events: [{ name: where === "event" ? long : "exception" }],
          };
          const body = JSON.stringify(exportOf([hostile, good.span]));
          if (Buffer.byteLength(body) > 1024 * 1024 && !gzip) return;
          const res = await post(
            `long ${where} ${length}`,
            gzip ? gzipSync(body) : body,
            gzipHeaders("application/json", gzip),
          );
          expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
          expect(await stored(good.id)).toBe(true);
          const name = tool.trim();
          if (name.length > 200)
            expect(res.body.partialSuccess?.errorMessage).toContain("the tool name must be 1 to 200 characters");
        },
      ),
      { numRuns: 40 },
    );
  });

  it("random bytes as protobuf, gzip or JSON", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom("application/x-protobuf", "application/json"),
        fc.boolean(),
        async (bytes, type, gzip) => {
          await post("random", bytes, { "content-type": type, ...(gzip ? { "content-encoding": "gzip" } : {}) });
        },
      ),
      { numRuns: 150 },
    );
  });
});
