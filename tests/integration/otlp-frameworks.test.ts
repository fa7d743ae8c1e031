import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { tool as langchainTool } from "@langchain/core/tools";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { generateText, stepCountIs, tool } from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { metrics, taskTimeline } from "./routes";
import { startServer, type TestServer } from "./http-server";
import { allInvocations, decisionOf, exportOnce, invocation, postRaw, queueIds, recorder } from "./otlp-support";

// The frameworks' own telemetry, unchanged, exported to a running Settle:
// the Vercel AI SDK's generateText (its mock model from ai/test) calling a
// tool that throws a timeout and one that returns, and the OpenInference
// LangChain.js instrumentation around @langchain/core tools.

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

describe("OTLP ingest from the frameworks' own telemetry (PostgreSQL)", () => {
  let t: TestContext;
  let server: TestServer;
  let operatorToken: string;

  beforeAll(async () => {
    t = await openSettle("postgres");
    server = await startServer();
    operatorToken = (await createOperator(t.db, "operator")).token;
  });
  afterAll(async () => {
    await server?.close();
    await t?.teardown();
  });

  describe("the Vercel AI SDK (ai 6, experimental_telemetry)", () => {
    const rec = recorder("travel-agent");
    let spans: ReadableSpan[];
    afterAll(() => rec.provider.shutdown());

    it("turns the tool that returned into a committed invocation and the one that timed out into an unknown one in the queue", async () => {
      let step = 0;
      const model = new MockLanguageModelV3({
        doGenerate: async () => {
          step += 1;
          if (step === 1) {
            return {
              content: [
                {
                  type: "tool-call",
                  toolCallId: "call-weather-1",
                  toolName: "get_weather",
                  input: JSON.stringify({ city: "Lisbon" }),
                },
                {
                  type: "tool-call",
                  toolCallId: "call-book-1",
                  toolName: "book_flight",
                  input: JSON.stringify({ flight: "TP1234", seat: "12A" }),
                },
              ],
              finishReason: { unified: "tool-calls", raw: "tool_calls" },
              usage,
              warnings: [],
            };
          }
          return {
            content: [{ type: "text", text: "Booked, I hope." }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: [],
          };
        },
      });
      const result = await generateText({
        model,
        prompt: "Book me a flight to Lisbon if the weather is good.",
        stopWhen: stepCountIs(3),
        experimental_telemetry: { isEnabled: true, tracer: rec.tracer },
        tools: {
          get_weather: tool({
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => ({ city, forecast: "sunny" }),
          }),
          book_flight: tool({
            inputSchema: z.object({ flight: z.string(), seat: z.string() }),
            execute: async ({ flight }): Promise<{ booking: string }> => {
              throw new Error(`Booking gateway timed out after 30000 ms (${flight})`);
            },
          }),
        },
      });
      expect(result.text).toBe("Booked, I hope.");
      spans = rec.take();
      expect(spans.map((s) => s.name)).toEqual(
        expect.arrayContaining(["ai.toolCall", "ai.generateText", "ai.generateText.doGenerate"]),
      );
      expect(
        await exportOnce(
          new JsonExporter({ url: `${server.url}/v1/traces`, headers: { Authorization: `Bearer ${t.key}` } }),
          spans,
        ),
      ).toEqual({ ok: true, error: undefined });

      const traceId = spans[0]!.spanContext().traceId;
      const weather = await invocation(t, "call-weather-1");
      expect(weather).toMatchObject({
        task_id: traceId,
        tool: "get_weather",
        status: "succeeded",
        commit_state: "committed",
      });
      const outcome = weather.attempts.find((a: { phase: string }) => a.phase === "outcome");
      expect(outcome).toMatchObject({ dialect: "otel-vercel-ai" });
      expect(outcome.envelope).toMatchObject({
        arguments: { city: "Lisbon" },
        result: { city: "Lisbon", forecast: "sunny" },
        otel: { convention: "otel-vercel-ai", trace_id: traceId, service_name: "travel-agent" },
      });

      const book = await invocation(t, "call-book-1");
      expect(book).toMatchObject({
        tool: "book_flight",
        status: "outcome_unknown",
        commit_state: "unknown",
        next_action: "verify_operation",
      });
      expect(book.attempts.find((a: { phase: string }) => a.phase === "outcome")).toMatchObject({
        dialect: "otel-vercel-ai",
        agent_message: "Booking gateway timed out after 30000 ms (TP1234)",
      });

      // Only the two executions: the model spans (which list the calls too) add nothing.
      expect([...(await allInvocations(t)).keys()].sort()).toEqual(["call-book-1", "call-weather-1"]);
      expect(await queueIds(operatorToken)).toEqual(["call-book-1"]);
      expect((await decisionOf(t, "call-book-1")).decision).toBe("wait");

      // Like any other: the trace's timeline (the trace is the task) and the trust metrics.
      const timeline = await call(taskTimeline, {
        key: t.key,
        params: { task_id: traceId },
        path: `/api/v1/tasks/${traceId}/timeline`,
      });
      expect(timeline.status).toBe(200);
      expect(JSON.stringify(timeline.body)).toContain("call-book-1");
      expect(JSON.stringify(timeline.body)).toContain("call-weather-1");
      const manager = (await createOperator(t.db, "manager")).token;
      const numbers = await call(metrics, { key: manager, path: `/api/v1/metrics?runtime=${t.runtime}` });
      expect(numbers.status).toBe(200);
      expect(numbers.body.unknown_outcomes.total).toBe(1);
      const byTool = Object.fromEntries(numbers.body.by_tool.map((r: { tool: string }) => [r.tool, r]));
      expect(byTool.book_flight).toMatchObject({ invocations: 1, unknown_outcomes: 1, open: 1 });
      expect(byTool.get_weather).toMatchObject({ invocations: 1, unknown_outcomes: 0 });
    });

    it("adds nothing when the same spans are exported again (protobuf this time)", async () => {
      const before = await allInvocations(t);
      expect(
        await exportOnce(
          new ProtoExporter({ url: `${server.url}/v1/traces`, headers: { Authorization: `Bearer ${t.key}` } }),
          spans,
        ),
      ).toEqual({ ok: true, error: undefined });
      expect([...(await allInvocations(t)).values()].map((i) => i.attempt_count)).toEqual(
        [...before.values()].map((i) => i.attempt_count),
      );
    });

    it("a truncated body of these spans is a typed 400", async () => {
      const { JsonTraceSerializer } = await import("@opentelemetry/otlp-transformer");
      const body = JsonTraceSerializer.serializeRequest(spans)!;
      const res = await postRaw(`${server.url}/v1/traces`, t.key, body.subarray(0, body.length / 2), {
        "content-type": "application/json",
      });
      expect(res).toMatchObject({ status: 400, body: { ok: false, code: "INVALID_JSON" } });
    });
  });

  describe("OpenInference's LangChain.js instrumentation", () => {
    const rec = recorder("support-agent");
    let spans: ReadableSpan[];
    afterAll(() => rec.provider.shutdown());

    it("turns TOOL spans into invocations with a stable trace:span id; chains add nothing", async () => {
      const instrumentation = new LangChainInstrumentation({ tracerProvider: rec.provider });
      instrumentation.manuallyInstrument(CallbackManagerModule);
      const lookup = langchainTool(
        async ({ order }: { order: string }) => JSON.stringify({ order, state: "shipped" }),
        {
          name: "lookup_order",
          description: "Looks an order up",
          schema: z.object({ order: z.string() }),
        },
      );
      const refund = langchainTool(
        async () => {
          throw new Error("payments API: socket hang up");
        },
        {
          name: "refund_order",
          description: "Refunds an order",
          schema: z.object({ order: z.string(), amount: z.number() }),
        },
      );
      await lookup.invoke({ order: "o-1" });
      await expect(refund.invoke({ order: "o-1", amount: 12.5 })).rejects.toThrow("socket hang up");
      instrumentation.disable();
      spans = rec.take();
      const toolSpans = spans.filter((s) => s.attributes["openinference.span.kind"] === "TOOL");
      expect(toolSpans).toHaveLength(2);
      expect(
        await exportOnce(
          new ProtoExporter({
            url: `${server.url}/api/v1/otlp/v1/traces`,
            headers: { Authorization: `Bearer ${t.key}` },
          }),
          spans,
        ),
      ).toEqual({ ok: true, error: undefined });

      const idOf = (name: string) => {
        const s = toolSpans.find((x) => x.attributes["tool.name"] === name)!;
        return `${s.spanContext().traceId}:${s.spanContext().spanId}`;
      };
      const looked = await invocation(t, idOf("lookup_order"));
      expect(looked).toMatchObject({ tool: "lookup_order", status: "succeeded", commit_state: "committed" });
      expect(looked.attempts.find((a: { phase: string }) => a.phase === "outcome")).toMatchObject({
        dialect: "otel-openinference",
      });
      expect(looked.attempts.find((a: { phase: string }) => a.phase === "outcome").envelope).toMatchObject({
        arguments: "o-1",
        otel: { convention: "otel-openinference" },
      }); // a single argument is flattened to its text
      const refunded = await invocation(t, idOf("refund_order"));
      expect(refunded).toMatchObject({
        tool: "refund_order",
        status: "outcome_unknown",
        commit_state: "unknown",
        next_action: "verify_operation",
      });
      expect(await queueIds(operatorToken)).toEqual(expect.arrayContaining([idOf("refund_order")]));
      expect((await decisionOf(t, idOf("refund_order"))).decision).toBe("wait");
      const ids = [...(await allInvocations(t)).keys()].filter((id) => id.includes(":"));
      expect(ids.sort()).toEqual([idOf("lookup_order"), idOf("refund_order")].sort());
    });

    it("adds nothing when the same spans are exported again", async () => {
      const before = await allInvocations(t);
      expect(
        await exportOnce(
          new JsonExporter({ url: `${server.url}/v1/traces`, headers: { Authorization: `Bearer ${t.key}` } }),
          spans,
        ),
      ).toEqual({ ok: true, error: undefined });
      expect([...(await allInvocations(t)).values()].map((i) => i.attempt_count)).toEqual(
        [...before.values()].map((i) => i.attempt_count),
      );
    });

    it("a truncated protobuf body of these spans is a typed 400", async () => {
      const { ProtobufTraceSerializer } = await import("@opentelemetry/otlp-transformer");
      const body = ProtobufTraceSerializer.serializeRequest(spans)!;
      const res = await postRaw(`${server.url}/v1/traces`, t.key, body.subarray(0, body.length - 3), {
        "content-type": "application/x-protobuf",
      });
      expect(res).toMatchObject({ status: 400, body: { ok: false, code: "INVALID_PROTOBUF" } });
    });
  });
});
