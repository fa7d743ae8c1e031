import { gzipSync } from "node:zlib";
import fc from "fast-check";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorEnvelopeSchema } from "@/lib/errors";
import descriptor from "@/lib/otlp/proto/trace-service.json";
import { decodeAnswer } from "@/lib/otlp/decode";
import { call, openSettle, type TestContext } from "./harness";
import { deepValue, hostileNumber, hostileText, hostileValue } from "./fuzz-inputs";
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
  if (res.status >= 400 && !errorEnvelopeSchema.safeParse(res.body).success) throw new Error(`${label}: ${res.status} without Settle's envelope: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res;
}

const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString("hex"));
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
  [{ key: "ai.operationId", value: { stringValue: "ai.toolCall" } }, { key: "ai.toolCall.name", value: { stringValue: "x" } }],
  [],
);
const hostileKey = fc.oneof(hostileText, fc.constantFrom("gen_ai.tool.name", "gen_ai.tool.call.id", "ai.toolCall.id", "gen_ai.tool.call.result", "ai.toolCall.result", "output.value", "input.value", "tool.name", "error.type", "gen_ai.tool.type"));
const hostileSpan = fc.record(
  {
    traceId: fc.oneof(hex(16), hostileText, fc.constant("0".repeat(32))),
    spanId: fc.oneof(hex(8), hostileText),
    parentSpanId: fc.oneof(hex(8), hostileText),
    name: fc.oneof(hostileText, fc.constantFrom("ai.toolCall", "execute_tool a", "tools/call b")),
    kind: fc.oneof(fc.integer({ min: -2, max: 9 }), hostileText),
    startTimeUnixNano: fc.oneof(hostileNumber, hostileText, fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String)),
    endTimeUnixNano: fc.oneof(hostileNumber, hostileText, fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String)),
    attributes: fc.tuple(toolMarkers, fc.array(fc.record({ key: hostileKey, value: anyValue }), { maxLength: 6 })).map(([m, rest]) => [...m, ...rest]),
    status: fc.oneof(fc.record({ code: fc.oneof(fc.integer({ min: -1, max: 4 }), hostileText), message: hostileText }, { requiredKeys: [] }), hostileValue),
    events: fc.oneof(fc.array(fc.record({ name: fc.constantFrom("exception", "x"), attributes: fc.array(fc.record({ key: hostileKey, value: anyValue }), { maxLength: 3 }) }), { maxLength: 2 }), hostileValue),
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

const exportOf = (spans: unknown[], resource: unknown = { attributes: [{ key: "service.name", value: { stringValue: "fuzz" } }] }) => ({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: "fuzz" }, spans }] }] });

describe("hostile OTLP exports never get a 5xx, never an untyped error, never cost a good span", () => {
  let t: TestContext;
  const post = async (label: string, body: Uint8Array | string, headers: Record<string, string>) => {
    const req = new Request("http://settle.test/v1/traces", { method: "POST", headers: { authorization: `Bearer ${t.key}`, ...headers }, body: typeof body === "string" ? body : Buffer.from(body) });
    const res = await otlpTraces(req);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const isJson = (res.headers.get("content-type") ?? "").startsWith("application/json");
    const answer = settled(label, { status: res.status, body: isJson ? JSON.parse(Buffer.from(bytes).toString("utf8")) : bytes });
    if (answer.status === 200 && !isJson) decodeAnswer(bytes);
    return answer;
  };
  const stored = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).status === 200;

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
      fc.asyncProperty(fc.array(hostileSpan, { minLength: 1, maxLength: 6 }), fc.oneof(fc.constant(undefined), hostileValue), async (spans, resource) => {
        const good = goodSpan();
        const res = await post("json", JSON.stringify(exportOf([...spans, good.span], resource ?? undefined)), { "content-type": "application/json" });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(await stored(good.id)).toBe(true);
      }),
      { numRuns: 250 },
    );
  });

  it("OTLP/JSON bodies of any shape", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hostileValue, fc.record({ resourceSpans: hostileValue }), fc.record({ resourceSpans: fc.array(fc.record({ scopeSpans: hostileValue, resource: hostileValue })) })), async (body) => {
        await post("json shape", JSON.stringify(body) ?? "null", { "content-type": "application/json" });
      }),
      { numRuns: 150 },
    );
  });

  it("protobuf: valid with hostile strings, or truncated and mutated", async () => {
    const text = hostileText.map((s) => s.toWellFormed());
    const protoSpan = fc.record({ name: text, kind: fc.integer({ min: 0, max: 5 }), key: text, value: text, status: fc.integer({ min: 0, max: 2 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(protoSpan, { maxLength: 4 }), fc.nat(), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.boolean(), async (specs, cut, flips, gzip) => {
        const good = goodSpan();
        const spans = specs.map((s, i) => ({
          traceId: Buffer.alloc(16, 7),
          spanId: Buffer.from((0x9000 + i).toString(16).padStart(16, "0"), "hex"),
          name: s.name,
          kind: s.kind,
          startTimeUnixNano: "1764655924123000000",
          endTimeUnixNano: "1764655924623000000",
          attributes: [{ key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } }, { key: s.key, value: { stringValue: s.value } }],
          status: { code: s.status },
        }));
        const goodProto = { ...good.span, traceId: Buffer.from(good.span.traceId, "hex"), spanId: Buffer.from(good.span.spanId, "hex") };
        const whole = ExportRequest.encode(ExportRequest.fromObject(exportOf([...spans, goodProto]))).finish();
        const res = await post("protobuf", gzip ? gzipSync(whole) : whole, { "content-type": "application/x-protobuf", ...(gzip ? { "content-encoding": "gzip" } : {}) });
        expect(res.status).toBe(200);
        expect(await stored(good.id)).toBe(true);
        const mutated = Buffer.from(whole.subarray(0, whole.length === 0 ? 0 : cut % whole.length));
        for (const [at, byte] of flips) if (mutated.length > 0) mutated[at % mutated.length] = byte;
        await post("protobuf mutated", gzip ? gzipSync(mutated) : mutated, { "content-type": "application/x-protobuf", ...(gzip ? { "content-encoding": "gzip" } : {}) });
      }),
      { numRuns: 150 },
    );
  });

  it("random bytes as protobuf, gzip or JSON", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.constantFrom("application/x-protobuf", "application/json"), fc.boolean(), async (bytes, type, gzip) => {
        await post("random", bytes, { "content-type": type, ...(gzip ? { "content-encoding": "gzip" } : {}) });
      }),
      { numRuns: 150 },
    );
  });
});
