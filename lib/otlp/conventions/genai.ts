import type { Span } from "../read-spans";
import { envelopeCandidates, jsonAttr, textAttr, type SpanAdapter } from "../span-records";
import { firstFailure, resultFailure, statusAttributeFailure } from "../failure-signals";

// OpenTelemetry's GenAI semantic conventions: `execute_tool {tool}` spans
// (gen_ai.operation.name = execute_tool, gen_ai.tool.name, gen_ai.tool.call.id,
// gen_ai.tool.type, opt-in gen_ai.tool.call.arguments / .result, error.type on
// failure), and MCP clients' `tools/call {tool}` spans (mcp.method.name), whose
// result, when recorded, is a CallToolResult read by the MCP dialect.
// A server's tools/call span is the other side of a client's call: not the
// agent's attempt, so it is not read.

const SERVER = 2;
const ARGUMENTS = "gen_ai.tool.call.arguments";
const RESULT = "gen_ai.tool.call.result";
const STATUS = "gen_ai.tool.call.status";

const isExecuteTool = (span: Span) => span.attributes["gen_ai.operation.name"] === "execute_tool";
const isMcpCall = (span: Span) => span.attributes["mcp.method.name"] === "tools/call" && span.kind !== SERVER;

/** The tool's name: its attribute, else the span name's second word (`execute_tool get_weather`). */
function toolOf(span: Span): string {
  const named = textAttr(span.attributes, "gen_ai.tool.name") ?? textAttr(span.attributes, "mcp.tool.name");
  if (named) return named;
  const [, rest] = /^(?:execute_tool|tools\/call)\s+(\S.*)$/.exec(span.name) ?? [];
  return rest ?? span.name;
}

export const otelGenaiAdapter: SpanAdapter = {
  convention: "otel-genai",
  detect: (span) => isExecuteTool(span) || isMcpCall(span),
  read: (span) => {
    const result = jsonAttr(span.attributes, RESULT);
    const evidence = envelopeCandidates(result);
    return {
      tool: toolOf(span),
      callId: textAttr(span.attributes, "gen_ai.tool.call.id"),
      toolType: textAttr(span.attributes, "gen_ai.tool.type"),
      errorType: textAttr(span.attributes, "error.type"),
      arguments: jsonAttr(span.attributes, ARGUMENTS),
      result,
      evidence,
      consumed: [ARGUMENTS, RESULT],
      failure: firstFailure(statusAttributeFailure(textAttr(span.attributes, STATUS)), ...evidence.map(resultFailure)),
    };
  },
};
