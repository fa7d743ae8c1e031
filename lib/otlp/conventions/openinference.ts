import { isRecord } from "../../ingest/adapters/shared";
import { envelopeCandidates, jsonAttr, textAttr, type SpanAdapter } from "../span-records";

// OpenInference (Arize Phoenix's instrumentations, e.g. LangChain.js): tool
// spans carry openinference.span.kind = TOOL, tool.name, the arguments in
// input.value and the result in output.value (LangChain: a serialized
// ToolMessage, whose content is what the tool returned). There is no
// tool-call id attribute, so the invocation is trace:span. CHAIN, LLM, AGENT,
// RETRIEVER, … spans are ignored.

const INPUT = "input.value";
const OUTPUT = "output.value";

/** LangChain's serialized ToolMessage ({lc, type: "constructor", id: [..., "ToolMessage"], kwargs: {content}}): its content. */
function toolMessageContent(output: unknown): unknown {
  if (!isRecord(output) || !isRecord(output.kwargs)) return undefined;
  const id = output.id;
  return Array.isArray(id) && id[id.length - 1] === "ToolMessage" ? output.kwargs.content : undefined;
}

export const otelOpeninferenceAdapter: SpanAdapter = {
  convention: "otel-openinference",
  detect: (span) => span.attributes["openinference.span.kind"] === "TOOL",
  read: (span) => {
    const result = jsonAttr(span.attributes, OUTPUT);
    return {
      tool: textAttr(span.attributes, "tool.name") ?? span.name,
      callId: null,
      toolType: null,
      errorType: null,
      arguments: jsonAttr(span.attributes, INPUT),
      result,
      evidence: envelopeCandidates(toolMessageContent(result), result),
      consumed: [INPUT, OUTPUT],
    };
  },
};
