import { describe, expect, it } from "vitest";
import { fitEvidence, MAX_EVIDENCE_BYTES } from "./ingest-spans";

// A span's stored evidence is at most 1 MiB: what does not fit is left out,
// largest and least read first, and `truncated` says so.

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
const otel = { convention: "otel-genai", trace_id: "t", span_id: "s", name: "execute_tool x" };
const mib = "x".repeat(MAX_EVIDENCE_BYTES);

describe("fitEvidence", () => {
  it("leaves evidence under the limit as it is", () => {
    const evidence = { otel, arguments: { a: 1 }, events: [] };
    expect(fitEvidence(evidence)).toBe(evidence);
  });

  it("leaves out events, then attributes, result and arguments, until it fits, and says so after what the reader said", () => {
    const evidence = {
      otel,
      tool_call_id: "c",
      arguments: { a: "y".repeat(900_000) },
      result: "r".repeat(300_000),
      attributes: { big: "z".repeat(100_000) },
      events: [{ name: mib }],
      truncated: ["2 texts were cut at 65536 characters"],
    };
    const fitted = fitEvidence(evidence) as Record<string, unknown>;
    expect(bytes(fitted)).toBeLessThanOrEqual(MAX_EVIDENCE_BYTES);
    expect(fitted).toMatchObject({
      otel,
      tool_call_id: "c",
      arguments: evidence.arguments,
      result: null,
      attributes: null,
      events: null,
    });
    expect(fitted.truncated).toEqual([
      "2 texts were cut at 65536 characters",
      "events left out: the span's evidence was over 1048576 bytes",
      "attributes left out: the span's evidence was over 1048576 bytes",
      "result left out: the span's evidence was over 1048576 bytes",
    ]);
  });

  it("keeps only the span's ids when its names and messages alone are over", () => {
    const fitted = fitEvidence({
      otel: { ...otel, name: mib, status: { message: mib } },
      tool_call_id: "c",
      arguments: null,
    }) as Record<string, unknown>;
    expect(fitted).toEqual({
      otel: { convention: "otel-genai", trace_id: "t", span_id: "s" },
      tool_call_id: null,
      truncated: ["only the span's ids kept: its evidence was over 1048576 bytes"],
    });
  });
});
