import { describe, expect, it } from "vitest";
import { readSpan } from "../read-spans";
import { contentHash } from "../../ingest/record";
import { jsonAttr, MAX_ATTRIBUTE_JSON_DEPTH, MAX_TOOL, SpanProblem } from "../span-records";
import { spanAdapters, spanRecords, type SpanOptions } from "../conventions";
import { END, otlpSpan, SOURCE } from "./helpers";

// A tool-call span whose values are hostile: a tool name no record may carry
// is refused before the catalog matches it; JSON text nested deeper than the
// walks after it allow stays text; what the reader left out is named in the
// evidence.

function recordsOf(raw: Record<string, unknown>, options: Partial<SpanOptions> = {}) {
  const { span } = readSpan(raw, SOURCE);
  const adapter = spanAdapters.find((a) => a.detect(span))!;
  return spanRecords(adapter, span, SOURCE, {
    effectClass: () => null,
    taskAttribute: null,
    receivedAt: new Date(END),
    ...options,
  });
}

const deepArray = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

describe("hostile tool-call spans", () => {
  it("a tool name over 200 characters is refused before the catalog sees it", () => {
    const matched: string[] = [];
    const effectClass = (tool: string) => {
      matched.push(tool);
      return null;
    };
    const raw = otlpSpan({
      name: "execute_tool x",
      attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t".repeat(MAX_TOOL + 1) },
    });
    expect(() => recordsOf(raw, { effectClass })).toThrow(SpanProblem);
    expect(() =>
      recordsOf(otlpSpan({ name: "   ", attributes: { "gen_ai.operation.name": "execute_tool" } }), { effectClass }),
    ).toThrow(SpanProblem);
    expect(matched).toEqual([]);
    const fine = recordsOf(
      otlpSpan({
        name: "execute_tool x",
        attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": ` ${"t".repeat(MAX_TOOL)} ` },
      }),
      { effectClass },
    );
    expect(matched).toEqual(["t".repeat(MAX_TOOL)]);
    expect(fine[0]!.tool).toBe("t".repeat(MAX_TOOL));
  });

  it("arguments and results nested deeper than 32 levels stay text, so no walk of them (the digest, redaction) can overflow the stack", () => {
    expect(jsonAttr({ a: deepArray(MAX_ATTRIBUTE_JSON_DEPTH) }, "a")).toEqual(
      JSON.parse(deepArray(MAX_ATTRIBUTE_JSON_DEPTH)),
    );
    expect(jsonAttr({ a: deepArray(MAX_ATTRIBUTE_JSON_DEPTH + 1) }, "a")).toBe(deepArray(MAX_ATTRIBUTE_JSON_DEPTH + 1));
    const deep = deepArray(30_000);
    const [, outcome] = recordsOf(
      otlpSpan({
        name: "execute_tool x",
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "x",
          "gen_ai.tool.call.arguments": deep,
          "gen_ai.tool.call.result": `{"a":${deep}}`,
        },
      }),
    );
    const evidence = outcome!.envelope as { arguments: unknown; result: unknown };
    expect(evidence.arguments).toBe(deep);
    expect(evidence.result).toBe(`{"a":${deep}}`);
    expect(() => contentHash(evidence.arguments)).not.toThrow();
  });

  it("the evidence says what the reader left out; a span read whole says nothing", () => {
    const attributes: Record<string, string> = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x" };
    for (let i = 0; i < 200; i += 1) attributes[`extra.${i}`] = "v";
    const [, outcome] = recordsOf(otlpSpan({ name: "execute_tool x", attributes }));
    expect((outcome!.envelope as { truncated?: string[] }).truncated).toEqual([
      "74 attributes beyond the first 128 of a list were not read",
    ]);
    const [open] = recordsOf(otlpSpan({ name: "execute_tool x", attributes, end: false }));
    expect((open!.envelope as { truncated?: string[] }).truncated).toHaveLength(1);
    const [, whole] = recordsOf(
      otlpSpan({
        name: "execute_tool x",
        attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x" },
      }),
    );
    expect(whole!.envelope).not.toHaveProperty("truncated");
  });
});
