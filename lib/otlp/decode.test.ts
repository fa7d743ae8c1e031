import { readFileSync } from "node:fs";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs helper shared with scripts/otlp-proto-json.mjs
import { otlpDescriptor } from "../../scripts/otlp-proto-descriptor.mjs";
import descriptor from "./trace-service.json";
import { decodeAnswer, decodeJson, decodeProtobuf, encodeAnswer, MAX_SPANS } from "./decode";
import { ApiError } from "../errors";

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const Request = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");

const hex = (s: string) => Buffer.from(s, "hex");
const TRACE = "5b8efff798038103d269b633813fc60c";
const SPAN = "eee19b7ec3c1b174";

function exportOf(spans: object[]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] },
        scopeSpans: [{ scope: { name: "s" }, spans }],
      },
    ],
  };
}
const span = {
  name: "execute_tool x",
  kind: 1,
  startTimeUnixNano: "1764655924123456789",
  endTimeUnixNano: "1764655924623000000",
  attributes: [
    { key: "n", value: { intValue: 5 } },
    { key: "a", value: { arrayValue: { values: [{ stringValue: "x" }, { boolValue: true }] } } },
    { key: "neg", value: { intValue: -3 } },
    { key: "big", value: { intValue: "9007199254740993" } },
    { key: "zero", value: { intValue: 0 } },
    { key: "off", value: { boolValue: false } },
    { key: "empty", value: { stringValue: "" } },
    {
      key: "kv",
      value: {
        kvlistValue: {
          values: [
            { key: "d", value: { doubleValue: 1.5 } },
            { key: "b", value: { bytesValue: "AAE=" } },
          ],
        },
      },
    },
  ],
  events: [
    {
      name: "exception",
      timeUnixNano: "1764655924600000001",
      attributes: [{ key: "exception.type", value: { stringValue: "Timeout" } }],
    },
  ],
  status: { code: 2, message: "boom" },
};

function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof ApiError ? error.code : `not an ApiError: ${String(error)}`;
  }
}

describe("OTLP trace decoding", () => {
  it("the committed descriptor is the vendored .proto files' (run scripts/otlp-proto-json.mjs after updating them)", () => {
    expect(JSON.parse(JSON.stringify(otlpDescriptor()))).toEqual(descriptor);
    expect(readFileSync(new URL("./vendor/LICENSE", import.meta.url), "utf8")).toContain("Apache License");
  });

  it("protobuf and JSON read to the same spans", () => {
    const fromProto = decodeProtobuf(
      Request.encode(Request.fromObject(exportOf([{ ...span, traceId: hex(TRACE), spanId: hex(SPAN) }]))).finish(),
    );
    const fromJson = decodeJson(Buffer.from(JSON.stringify(exportOf([{ ...span, traceId: TRACE, spanId: SPAN }]))));
    expect(fromProto).toEqual(fromJson);
    expect(fromJson[0]!.span).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      parentSpanId: null,
      start: "2025-12-02T06:12:04.123Z",
      end: "2025-12-02T06:12:04.623Z",
      attributes: {
        n: 5,
        a: ["x", true],
        neg: -3,
        big: "9007199254740993",
        zero: 0,
        off: false,
        empty: "",
        kv: { d: 1.5, b: "AAE=" },
      },
      events: [{ name: "exception", at: "2025-12-02T06:12:04.600Z", attributes: { "exception.type": "Timeout" } }],
      status: { code: 2, message: "boom" },
    });
    expect(fromJson[0]!.source).toEqual({ resource: { "service.name": "svc" }, scope: { name: "s", version: null } });
    expect(fromJson[0]!.problems).toEqual([]);
  });

  it("a bad id is that span's problem, not the request's", () => {
    const [bad, good] = decodeJson(
      Buffer.from(
        JSON.stringify(
          exportOf([
            { ...span, traceId: "xyz", spanId: SPAN },
            { ...span, traceId: TRACE, spanId: SPAN },
          ]),
        ),
      ),
    );
    expect(bad!.problems.join()).toContain("traceId");
    expect(good!.problems).toEqual([]);
  });

  it("a body that is not an export is a 400 of its own kind", () => {
    const valid = Request.encode(
      Request.fromObject(exportOf([{ ...span, traceId: hex(TRACE), spanId: hex(SPAN) }])),
    ).finish();
    expect(code(() => decodeProtobuf(valid.subarray(0, valid.length - 7)))).toBe("INVALID_PROTOBUF");
    expect(code(() => decodeProtobuf(Buffer.from('{"resourceSpans":[]}')))).toBe("INVALID_PROTOBUF");
    expect(code(() => decodeJson(Buffer.from('{"resourceSpans":[')))).toBe("INVALID_JSON");
    expect(code(() => decodeJson(Buffer.from('{"resourceSpans":{}}')))).toBe("INVALID_REQUEST");
    expect(code(() => decodeJson(Buffer.from("[1,2]")))).toBe("INVALID_REQUEST");
    const many = exportOf(Array.from({ length: MAX_SPANS + 1 }, () => ({})));
    expect(code(() => decodeJson(Buffer.from(JSON.stringify(many))))).toBe("TOO_MANY_RECORDS");
    expect(decodeProtobuf(new Uint8Array())).toEqual([]);
  });

  it("answers ExportTraceServiceResponse in either encoding", () => {
    expect(encodeAnswer(null, "json")).toBe("{}");
    const answer = { rejectedSpans: 2, errorMessage: "two bad spans" };
    expect(JSON.parse(encodeAnswer(answer, "json") as string)).toEqual({ partialSuccess: answer });
    expect(decodeAnswer(encodeAnswer(answer, "protobuf") as Uint8Array)).toEqual({ partialSuccess: answer });
  });
});
