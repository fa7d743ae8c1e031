import { gzipSync } from "node:zlib";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import descriptor from "@/lib/otlp/trace-service.json";
import { decodeAnswer } from "@/lib/otlp/decode";
import { MAX_EVIDENCE_BYTES } from "@/lib/otlp/ingest-spans";
import { call, openSettle, type TestContext } from "./harness";
import { getInvocation, otlpTraces } from "./routes";

// OTLP bodies built to cost Settle more than they cost the sender: a few KB of
// gzip that inflate to millions of empty elements, one span's array of
// millions of values, attributes of megabytes, arguments nested thirty
// thousand deep, a tool name of hundreds of characters. Each is refused
// before it is decoded (413), or read within its limits: stored evidence of a
// span at most 1 MiB and saying what was left out.

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const ExportRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");

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

const TRACE = "7c".repeat(16);
let serial = 0;
function toolSpan(attributes: Array<{ key: string; value: object }>, name = "execute_tool bomb") {
  serial += 1;
  const spanId = (0x5000 + serial).toString(16).padStart(16, "0");
  return {
    spanId,
    span: {
      traceId: TRACE,
      spanId,
      name,
      kind: 1,
      startTimeUnixNano: "1764655924123000000",
      endTimeUnixNano: "1764655924623000000",
      attributes: [
        { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
        { key: "gen_ai.tool.call.id", value: { stringValue: `limits-${serial}` } },
        ...attributes,
      ],
      status: { code: 1 },
    },
  };
}
const exportOf = (spans: object[]) => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: "service.name", value: { stringValue: "limits" } }] },
      scopeSpans: [{ scope: { name: "limits" }, spans }],
    },
  ],
});
const protobufOf = (spans: object[]) =>
  Buffer.from(
    ExportRequest.encode(
      ExportRequest.fromObject(
        exportOf(
          spans.map((s) => ({
            ...s,
            traceId: Buffer.from(TRACE, "hex"),
            spanId: Buffer.from((s as { spanId: string }).spanId, "hex"),
          })),
        ),
      ),
    ).finish(),
  );

describe("OTLP bodies that cost more than they weigh (PostgreSQL)", () => {
  let t: TestContext;
  const post = async (body: Uint8Array | string, type: string, gzip: boolean) => {
    const bytes = gzip ? gzipSync(body) : body;
    const headers: Record<string, string> = {
      authorization: `Bearer ${t.key}`,
      "content-type": type,
      ...(gzip ? { "content-encoding": "gzip" } : {}),
    };
    const res = await otlpTraces(
      new Request("http://settle.test/v1/traces", { method: "POST", headers, body: Buffer.from(bytes) }),
    );
    const raw = Buffer.from(await res.arrayBuffer());
    const isJson = (res.headers.get("content-type") ?? "").startsWith("application/json");
    return {
      status: res.status,
      sent: bytes.length,
      body: (isJson ? JSON.parse(raw.toString("utf8")) : decodeAnswer(raw)) as Record<string, any>,
    };
  };
  const evidence = async (spanId: string, phase = "outcome") => {
    const rows = await t.db.prisma.$queryRaw<
      Array<{ bytes: number; truncated: unknown; args: string | null; digest: string | null }>
    >`
      SELECT octet_length(envelope::text) AS bytes, envelope->'truncated' AS truncated, envelope->>'arguments' AS args, args_digest AS digest
      FROM attempts WHERE event_id = ${`otel:${TRACE}:${spanId}:${phase}`}`;
    return rows[0] ?? null;
  };

  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("8 KB of gzip inflating to 8 MiB of empty KeyValues is refused as too large, unread", async () => {
    const bomb = Buffer.alloc(8 * 1024 * 1024 - 64, Buffer.from([0x0a, 0x00]));
    const res = await post(bomb, "application/x-protobuf", true);
    expect(res.sent).toBeLessThan(16 * 1024);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ ok: false, code: "PAYLOAD_TOO_LARGE", safe_details: { limit_elements: 131072 } });
  });

  it("one tool span with an arrayValue of 4 M empty values is refused; nothing of it is stored", async () => {
    const { spanId, span } = toolSpan([{ key: "gen_ai.tool.name", value: { stringValue: "bomb" } }]);
    const head = protobufOf([span]);
    // The same export with one more attribute on its span: k = [4 M empty AnyValues], spliced in by hand (4 M objects is what protobufjs would build).
    const kv = Buffer.concat([
      field(1, Buffer.from("k")),
      field(2, field(5, Buffer.alloc(2 * 4_000_000, Buffer.from([0x0a, 0x00])))),
    ]);
    const decoded = ExportRequest.decode(head) as any;
    const spanBytes = Buffer.concat([
      Buffer.from(
        root
          .lookupType("opentelemetry.proto.trace.v1.Span")
          .encode(decoded.resourceSpans[0].scopeSpans[0].spans[0])
          .finish(),
      ),
      field(9, kv),
    ]);
    const body = field(1, field(2, field(2, spanBytes)));
    const res = await post(body, "application/x-protobuf", true);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("PAYLOAD_TOO_LARGE");
    expect(await evidence(spanId)).toBeNull();
  });

  it("OTLP/JSON with millions of tiny elements is refused as too large", async () => {
    const res = await post(`{"resourceSpans":[${"{},".repeat(2_700_000)}{}]}`, "application/json", true);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("a span of 130 attributes of 56 KiB, a 200 KB result and 1,000 array items: stored, its evidence at most 1 MiB and marked truncated", async () => {
    const big = "x".repeat(56 * 1024);
    const attributes = [
      { key: "gen_ai.tool.name", value: { stringValue: "wide" } },
      { key: "gen_ai.tool.call.result", value: { stringValue: `{"r":"${"y".repeat(200_000)}"}` } },
      { key: "list", value: { arrayValue: { values: Array.from({ length: 1000 }, (_, i) => ({ intValue: i })) } } },
      ...Array.from({ length: 130 }, (_, i) => ({ key: `big.${i}`, value: { stringValue: big } })),
    ];
    for (const encoding of ["protobuf", "json"] as const) {
      const { spanId, span } = toolSpan(attributes);
      const res =
        encoding === "json"
          ? await post(JSON.stringify(exportOf([span])), "application/json", true)
          : await post(protobufOf([span]), "application/x-protobuf", true);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const stored = await evidence(spanId);
      expect(stored!.bytes).toBeLessThanOrEqual(MAX_EVIDENCE_BYTES);
      expect(stored!.truncated).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/attributes beyond the first 128/),
          expect.stringMatching(/array items/),
          expect.stringMatching(/cut at 65536/),
          expect.stringMatching(/over 1048576 bytes/),
        ]),
      );
      const answer = await call(getInvocation, { key: t.key, params: { invocation_id: `limits-${serial}` } });
      expect(answer.status).toBe(200);
      expect(JSON.stringify(answer.body).length).toBeLessThan(2 * MAX_EVIDENCE_BYTES);
    }
  });

  it("arguments nested 30,000 deep are stored as text, not walked (was a 500: the digest's recursion overflowed)", async () => {
    const deep = `${"[".repeat(30_000)}1${"]".repeat(30_000)}`;
    for (const ended of [false, true]) {
      const { spanId, span } = toolSpan([
        { key: "gen_ai.tool.name", value: { stringValue: "deep" } },
        { key: "gen_ai.tool.call.arguments", value: { stringValue: deep } },
      ]);
      const res = await post(
        protobufOf([ended ? span : { ...span, endTimeUnixNano: "0" }]),
        "application/x-protobuf",
        false,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const stored = await evidence(spanId, ended ? "outcome" : "intent");
      expect(stored?.args).toBe(deep);
      // The digest is taken from the intent's arguments, which only an open span's intent carries.
      if (!ended) expect(stored?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
  });

  it("a tool name of 300 characters rejects that span alone, by name length", async () => {
    const long = toolSpan([{ key: "gen_ai.tool.name", value: { stringValue: "t".repeat(300) } }]);
    const good = toolSpan([{ key: "gen_ai.tool.name", value: { stringValue: "fine" } }]);
    const res = await post(JSON.stringify(exportOf([long.span, good.span])), "application/json", false);
    expect(res.status).toBe(200);
    expect(res.body.partialSuccess).toMatchObject({
      rejectedSpans: 1,
      errorMessage: expect.stringContaining("the tool name must be 1 to 200 characters"),
    });
    expect(await evidence(long.spanId)).toBeNull();
    expect(await evidence(good.spanId)).not.toBeNull();
  });
});
