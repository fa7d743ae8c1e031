import { envelopeCandidates, jsonAttr, textAttr, type SpanAdapter } from "../span-records";
import { firstFailure, resultFailure } from "../failure-signals";

// The Vercel AI SDK (`ai` 6, experimental_telemetry): tool executions are
// `ai.toolCall` spans with ai.toolCall.name / .id / .args and, on success,
// ai.toolCall.result. No gen_ai.* tool attributes. A tool that returned ends
// with status UNSET (not OK): committed; one that threw ends ERROR with its
// message and an exception event, and no error.type. The model spans
// (ai.generateText, ai.generateText.doGenerate, which lists the calls the
// model asked for) are not executions and are ignored.

const ARGS = "ai.toolCall.args";
const RESULT = "ai.toolCall.result";

export const otelVercelAiAdapter: SpanAdapter = {
  convention: "otel-vercel-ai",
  detect: (span) =>
    span.name === "ai.toolCall" ||
    span.attributes["operation.name"] === "ai.toolCall" ||
    (span.attributes["ai.operationId"] === "ai.toolCall" && "ai.toolCall.name" in span.attributes),
  read: (span) => {
    const result = jsonAttr(span.attributes, RESULT);
    const evidence = envelopeCandidates(result);
    return {
      tool: textAttr(span.attributes, "ai.toolCall.name") ?? span.name,
      callId: textAttr(span.attributes, "ai.toolCall.id"),
      toolType: null,
      errorType: null,
      arguments: jsonAttr(span.attributes, ARGS),
      result,
      evidence,
      consumed: [ARGS, RESULT],
      // A tool that returned { success: false } ends UNSET like one that succeeded: its result says which.
      failure: firstFailure(...evidence.map(resultFailure)),
    };
  },
};
