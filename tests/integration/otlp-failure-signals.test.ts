import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { ToolMessage } from "@langchain/core/messages";
import { tool as langchainTool } from "@langchain/core/tools";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { SpanKind } from "@opentelemetry/api";
import { generateText, stepCountIs, tool } from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openSettle, type TestContext } from "./harness";
import { startServer, type TestServer } from "./http-server";
import { allInvocations, exportOnce, recorder } from "./otlp-support";

// Spans that do not say ERROR but whose tool failed, from the real exporters to a running Settle: the AI SDK's
// ai.toolCall with { success: false } (status UNSET), OpenInference's LangChain.js span around a ToolMessage with
// status "error" (status OK), and a GenAI execute_tool span with gen_ai.tool.call.status = "error". Each is an
// unknown outcome in the queue, never committed; the same shapes saying success are committed.

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

describe("failure signals in spans that are not ERROR, from the real exporters (PostgreSQL)", () => {
  let t: TestContext;
  let server: TestServer;
  beforeAll(async () => {
    t = await openSettle("postgres");
    server = await startServer();
  });
  afterAll(async () => {
    await server?.close();
    await t?.teardown();
  });
  const exporters = () => ({
    json: new JsonExporter({ url: `${server.url}/v1/traces`, headers: { Authorization: `Bearer ${t.key}` } }),
    proto: new ProtoExporter({ url: `${server.url}/v1/traces`, headers: { Authorization: `Bearer ${t.key}` } }),
  });

  it("the AI SDK: a tool that returned { success: false } is unknown; { success: true } is committed", async () => {
    const rec = recorder("ai-agent");
    let step = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        step += 1;
        if (step > 1)
          return {
            content: [{ type: "text", text: "ok" }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: [],
          };
        return {
          content: [
            { type: "tool-call", toolCallId: "ai-declined", toolName: "charge_card", input: '{"amount":42}' },
            { type: "tool-call", toolCallId: "ai-charged", toolName: "charge_card", input: '{"amount":7}' },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      },
    });
    await generateText({
      model,
      prompt: "charge",
      stopWhen: stepCountIs(3),
      experimental_telemetry: { isEnabled: true, tracer: rec.tracer },
      tools: {
        charge_card: tool({
          inputSchema: z.object({ amount: z.number() }),
          execute: async ({ amount }) =>
            amount > 10 ? { success: false, error: "card declined" } : { success: true, charge: "ch_1" },
        }),
      },
    });
    const spans = rec.take();
    expect(spans.filter((s) => s.name === "ai.toolCall").map((s) => s.status.code)).toEqual([0, 0]);
    expect(await exportOnce(exporters().json, spans)).toMatchObject({ ok: true });
    const all = await allInvocations(t);
    expect(all.get("ai-declined")).toMatchObject({ status: "outcome_unknown", commit_state: "unknown" });
    expect(all.get("ai-charged")).toMatchObject({ status: "succeeded", commit_state: "committed" });
    await rec.provider.shutdown();
  });

  it("OpenInference (LangChain.js): a ToolMessage with status error is unknown although the span says OK", async () => {
    const rec = recorder("langchain-agent");
    new LangChainInstrumentation({ tracerProvider: rec.provider }).manuallyInstrument(CallbackManagerModule);
    const send = langchainTool(
      async ({ to }, config) =>
        to === "bounce@example.com"
          ? new ToolMessage({
              content: "mail gateway timeout",
              tool_call_id: config.toolCall?.id ?? "",
              status: "error",
            })
          : "sent",
      { name: "send_invoice", description: "Sends an invoice", schema: z.object({ to: z.string() }) },
    );
    await send.invoke({ type: "tool_call", id: "tc_fail", name: "send_invoice", args: { to: "bounce@example.com" } });
    await send.invoke({ type: "tool_call", id: "tc_ok", name: "send_invoice", args: { to: "ana@example.com" } });
    const spans = rec.take().filter((s) => s.attributes["openinference.span.kind"] === "TOOL");
    expect(spans.map((s) => s.status.code)).toEqual([1, 1]);
    expect(await exportOnce(exporters().proto, spans)).toMatchObject({ ok: true });
    const ids = spans.map((s) => `${s.spanContext().traceId}:${s.spanContext().spanId}`);
    const all = await allInvocations(t);
    expect(all.get(ids[0]!)).toMatchObject({
      tool: "send_invoice",
      status: "outcome_unknown",
      commit_state: "unknown",
    });
    expect(all.get(ids[1]!)).toMatchObject({ tool: "send_invoice", status: "succeeded", commit_state: "committed" });
    await rec.provider.shutdown();
  });

  it("GenAI: execute_tool with gen_ai.tool.call.status = error (status UNSET) is unknown; = success is committed", async () => {
    const rec = recorder("genai-agent");
    for (const [id, status] of [
      ["genai-failed", "error"],
      ["genai-ok", "success"],
    ] as const) {
      const span = rec.tracer.startSpan("execute_tool refund_payment", {
        kind: SpanKind.INTERNAL,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "refund_payment",
          "gen_ai.tool.call.id": id,
          "gen_ai.tool.call.status": status,
        },
      });
      span.end();
    }
    expect(await exportOnce(exporters().json, rec.take())).toMatchObject({ ok: true });
    const all = await allInvocations(t);
    expect(all.get("genai-failed")).toMatchObject({ status: "outcome_unknown", commit_state: "unknown" });
    expect(all.get("genai-ok")).toMatchObject({ status: "succeeded", commit_state: "committed" });
    await rec.provider.shutdown();
  });
});
