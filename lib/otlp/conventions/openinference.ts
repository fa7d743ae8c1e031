import { envelopeCandidates, jsonAttr, textAttr, type SpanAdapter } from "../span-records";
import { firstFailure, resultFailure, toolMessageFailure, toolMessageOf } from "../failure-signals";

// OpenInference (Arize Phoenix's instrumentations, e.g. LangChain.js): tool
// spans carry openinference.span.kind = TOOL, tool.name, the arguments in
// input.value and the result in output.value (LangChain: a serialized
// ToolMessage, under `output` in 4.x, whose content is what the tool returned). There is no
// tool-call id attribute, so the invocation is trace:span. CHAIN, LLM, AGENT,
// RETRIEVER, … spans are ignored.

const INPUT = "input.value";
const OUTPUT = "output.value";

export const otelOpeninferenceAdapter: SpanAdapter = {
  convention: "otel-openinference",
  detect: (span) => span.attributes["openinference.span.kind"] === "TOOL",
  read: (span) => {
    const result = jsonAttr(span.attributes, OUTPUT);
    const evidence = envelopeCandidates(toolMessageOf(result)?.content, result);
    return {
      tool: textAttr(span.attributes, "tool.name") ?? span.name,
      callId: null,
      toolType: null,
      errorType: null,
      arguments: jsonAttr(span.attributes, INPUT),
      result,
      evidence,
      consumed: [INPUT, OUTPUT],
      // The instrumentation marks the span OK even when the ToolMessage says "error": the message is the tool's word.
      failure: firstFailure(toolMessageFailure(result), ...evidence.map(resultFailure)),
    };
  },
};
