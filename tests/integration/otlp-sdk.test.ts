import { gzipSync } from "node:zlib";
import { SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { decodeAnswer } from "@/lib/otlp/decode";
import { createOperator, openSettle, type TestContext } from "./harness";
import { startServer, type TestServer } from "./http-server";
import {
  allInvocations,
  decisionOf,
  exportOnce,
  invocation,
  postRaw,
  queueIds,
  queueItems,
  recorder,
} from "./otlp-support";

// The OpenTelemetry JS SDK's own OTLP/HTTP exporters (JSON and protobuf, gzip
// or not) sending GenAI execute_tool and MCP tools/call spans, with the chat
// and agent spans around them, to a running Settle: the right invocations and
// commit states, queue entries for the unknown writes, nothing from the other
// spans, nothing new on a re-send, and a 400 for a malformed body.

/** An agent turn as a GenAI-instrumented framework traces it: agent → chat → four tool calls. */
async function agentTurn(tracer: Tracer, p: string): Promise<void> {
  await tracer.startActiveSpan(
    "invoke_agent billing",
    { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "billing" } },
    async (agent) => {
      await tracer.startActiveSpan(
        "chat gpt-4o",
        { kind: SpanKind.CLIENT, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" } },
        async (chat) => chat.end(),
      );
      const tool = (
        name: string,
        id: string,
        attrs: Record<string, string>,
        fail?: { type: string; message: string },
      ) =>
        tracer.startActiveSpan(
          `execute_tool ${name}`,
          {
            attributes: {
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": name,
              "gen_ai.tool.call.id": id,
              ...attrs,
            },
          },
          (span) => {
            if (fail) {
              span.setAttribute("error.type", fail.type);
              span.recordException(new Error(fail.message));
              span.setStatus({ code: SpanStatusCode.ERROR, message: fail.message });
            } else span.setStatus({ code: SpanStatusCode.OK });
            span.end();
          },
        );
      tool("create_order", `${p}-ok`, {
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.arguments": '{"sku":"A-1","qty":2}',
        "gen_ai.tool.call.result": '{"order_id":"o-9"}',
      });
      tool(
        "send_invoice",
        `${p}-timeout`,
        { "gen_ai.tool.type": "function", "gen_ai.tool.call.arguments": '{"order_id":"o-9"}' },
        { type: "timeout", message: "upstream timed out after 30 s" },
      );
      tool(
        "search_orders",
        `${p}-read`,
        { "gen_ai.tool.type": "datastore" },
        { type: "timeout", message: "index busy" },
      );
      tracer.startActiveSpan(
        "tools/call refund_payment",
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": "refund_payment",
            "jsonrpc.request.id": "3",
            "mcp.session.id": "s-1",
          },
        },
        (span) => {
          span.setAttribute("error.type", "tool_error");
          span.setAttribute(
            "gen_ai.tool.call.result",
            JSON.stringify({ content: [{ type: "text", text: "refund service unavailable" }], isError: true }),
          );
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      );
      agent.end();
    },
  );
}

const variants = [
  {
    name: "JSON to /v1/traces",
    path: "/v1/traces",
    make: (url: string, key: string) => new JsonExporter({ url, headers: { Authorization: `Bearer ${key}` } }),
  },
  {
    name: "protobuf to /api/v1/otlp/v1/traces",
    path: "/api/v1/otlp/v1/traces",
    make: (url: string, key: string) => new ProtoExporter({ url, headers: { Authorization: `Bearer ${key}` } }),
  },
  {
    name: "gzip protobuf to /v1/traces",
    path: "/v1/traces",
    make: (url: string, key: string) =>
      new ProtoExporter({ url, headers: { Authorization: `Bearer ${key}` }, compression: "gzip" as never }),
  },
  {
    name: "gzip JSON to /api/v1/otlp/v1/traces",
    path: "/api/v1/otlp/v1/traces",
    make: (url: string, key: string) =>
      new JsonExporter({ url, headers: { Authorization: `Bearer ${key}` }, compression: "gzip" as never }),
  },
];

describe("OTLP ingest from the OpenTelemetry JS SDK's exporters (PostgreSQL)", () => {
  let t: TestContext;
  let server: TestServer;
  let operatorToken: string;
  const rec = recorder("billing-agent");
  const sent: Record<string, ReadableSpan[]> = {};

  beforeAll(async () => {
    t = await openSettle("postgres");
    server = await startServer();
    operatorToken = (await createOperator(t.db, "operator")).token;
  });
  afterAll(async () => {
    await server?.close();
    await rec.provider.shutdown();
    await t?.teardown();
  });

  describe.each(variants.map((v, i) => ({ ...v, p: `v${i}` })))("$name", ({ path, make, p }) => {
    let exporter: SpanExporter;
    beforeAll(() => {
      exporter = make(`${server.url}${path}`, t.key);
    });

    it("stores each tool call as an invocation with its commit state, and nothing from the chat and agent spans", async () => {
      await agentTurn(rec.tracer, p);
      sent[p] = rec.take();
      expect(sent[p]).toHaveLength(6);
      expect(await exportOnce(exporter, sent[p]!)).toEqual({ ok: true, error: undefined });

      const traceId = sent[p]![0]!.spanContext().traceId;
      const mcpSpan = sent[p]!.find((s) => s.name === "tools/call refund_payment")!;
      const mcpId = `${traceId}:${mcpSpan.spanContext().spanId}`;
      const ok = await invocation(t, `${p}-ok`);
      expect(ok).toMatchObject({
        task_id: traceId,
        tool: "create_order",
        status: "succeeded",
        commit_state: "committed",
        effect_class: null,
        attempt_count: 1,
      });
      const outcome = ok.attempts.find((a: { phase: string }) => a.phase === "outcome");
      expect(outcome).toMatchObject({ dialect: "otel-genai", commit_state: "committed" });
      expect(outcome.envelope).toMatchObject({
        arguments: { sku: "A-1", qty: 2 },
        result: { order_id: "o-9" },
        otel: { trace_id: traceId, service_name: "billing-agent", convention: "otel-genai" },
      });
      expect(await invocation(t, `${p}-timeout`)).toMatchObject({
        tool: "send_invoice",
        status: "outcome_unknown",
        commit_state: "unknown",
        next_action: "verify_operation",
      });
      expect(await invocation(t, `${p}-read`)).toMatchObject({
        tool: "search_orders",
        effect_class: "read",
        commit_state: "not_committed",
      });
      const mcp = await invocation(t, mcpId);
      expect(mcp).toMatchObject({ tool: "refund_payment", status: "outcome_unknown", commit_state: "unknown" });
      expect(mcp.attempts.find((a: { phase: string }) => a.phase === "outcome")).toMatchObject({
        dialect: "mcp",
        wrapper_dialect: "otel-genai",
        agent_message: "refund service unavailable",
      });

      const mine = [...(await allInvocations(t)).keys()].filter((id) => id.startsWith(p) || id.startsWith(traceId));
      expect(mine.sort()).toEqual([`${p}-ok`, `${p}-read`, `${p}-timeout`, mcpId].sort());
      const queued = await queueIds(operatorToken);
      expect(queued).toEqual(expect.arrayContaining([`${p}-timeout`, mcpId]));
      expect(queued).not.toContain(`${p}-ok`);
      // Its task is the span's trace: the queue names the span's service and the trace, not 32 hex as a task.
      const items = await queueItems(operatorToken);
      expect(items.find((i) => i.invocation_id === `${p}-timeout`)?.trace).toEqual({
        service: "billing-agent",
        trace_id: traceId,
      });
      expect((await decisionOf(t, `${p}-timeout`)).decision).toBe("wait");
      expect((await decisionOf(t, `${p}-ok`)).decision).toBe("do_not_retry");
    });

    it("adds nothing when the same spans are exported again", async () => {
      const before = await allInvocations(t);
      expect(await exportOnce(exporter, sent[p]!)).toEqual({ ok: true, error: undefined });
      const after = await allInvocations(t);
      expect([...after.entries()].map(([id, i]) => [id, i.attempt_count, i.status])).toEqual(
        [...before.entries()].map(([id, i]) => [id, i.attempt_count, i.status]),
      );
    });
  });

  it("takes effect classes from the runtime's tool catalog: it outranks the span's datastore hint, and an unlisted tool stays a write", async () => {
    await addToolCatalogEntry(t.db, { runtime: t.runtime, pattern: "send_*", effect_class: "send" }, "admin@test");
    await addToolCatalogEntry(
      t.db,
      { runtime: t.runtime, pattern: "search_orders", effect_class: "money" },
      "admin@test",
    );
    await agentTurn(rec.tracer, "cat");
    expect(
      await exportOnce(
        new JsonExporter({ url: `${server.url}/v1/traces`, headers: { Authorization: `Bearer ${t.key}` } }),
        rec.take(),
      ),
    ).toEqual({ ok: true, error: undefined });
    expect(await invocation(t, "cat-timeout")).toMatchObject({
      tool: "send_invoice",
      effect_class: "send",
      commit_state: "unknown",
    });
    // A datastore span the catalog calls money: its failure is a write's, unknown, not a read's not_committed.
    expect(await invocation(t, "cat-read")).toMatchObject({
      tool: "search_orders",
      effect_class: "money",
      commit_state: "unknown",
      next_action: "verify_operation",
    });
    expect(await invocation(t, "cat-ok")).toMatchObject({
      tool: "create_order",
      effect_class: null,
      commit_state: "committed",
    });
  });

  it("answers partialSuccess: the non-tool spans counted (rejected 0), a span with a bad id rejected alone", async () => {
    await agentTurn(rec.tracer, "ps");
    const spans = rec.take();
    const body = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString("utf8"));
    const res = await postRaw(`${server.url}/v1/traces`, t.key, JSON.stringify(body), {
      "content-type": "application/json",
    });
    expect(res).toMatchObject({ status: 200, contentType: "application/json" });
    expect(res.body).toEqual({
      partialSuccess: {
        rejectedSpans: 0,
        errorMessage: "Settle: 4 of 4 tool-call spans stored; 2 spans are not tool calls and were ignored.",
      },
    });

    await agentTurn(rec.tracer, "ps2");
    const next = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(rec.take())!).toString("utf8"));
    const list = next.resourceSpans[0].scopeSpans[0].spans as Array<{ name: string; spanId: string }>;
    list.find((s) => s.name === "execute_tool create_order")!.spanId = "not-hex";
    const bad = await postRaw(`${server.url}/v1/traces`, t.key, JSON.stringify(next), {
      "content-type": "application/json",
    });
    expect(bad.status).toBe(200);
    expect(bad.body.partialSuccess).toMatchObject({ rejectedSpans: 1 });
    expect(String((bad.body.partialSuccess as { errorMessage: string }).errorMessage)).toContain(
      "spanId is not a valid span id",
    );
    const stored = await allInvocations(t);
    expect(stored.has("ps2-ok")).toBe(false);
    expect(stored.get("ps2-timeout")).toMatchObject({ status: "outcome_unknown" });

    const proto = ProtobufTraceSerializer.serializeRequest(spans)!;
    const protoRes = await fetch(`${server.url}/api/v1/otlp/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/x-protobuf" },
      body: Buffer.from(proto),
    });
    expect(protoRes.headers.get("content-type")).toBe("application/x-protobuf");
    // protobuf leaves a 0 out of the wire: rejectedSpans reads back absent.
    expect(decodeAnswer(new Uint8Array(await protoRes.arrayBuffer()))).toEqual({
      partialSuccess: {
        errorMessage: "Settle: 4 of 4 tool-call spans stored; 2 spans are not tool calls and were ignored.",
      },
    });
  });

  it("answers a malformed or truncated body 400 with a typed error, never 5xx", async () => {
    await agentTurn(rec.tracer, "bad");
    const spans = rec.take();
    const proto = ProtobufTraceSerializer.serializeRequest(spans)!;
    const json = JsonTraceSerializer.serializeRequest(spans)!;
    const url = `${server.url}/v1/traces`;
    const cases: Array<[string, Uint8Array | string, Record<string, string>, number, string]> = [
      [
        "truncated protobuf",
        proto.subarray(0, proto.length - 9),
        { "content-type": "application/x-protobuf" },
        400,
        "INVALID_PROTOBUF",
      ],
      ["JSON sent as protobuf", json, { "content-type": "application/x-protobuf" }, 400, "INVALID_PROTOBUF"],
      [
        "truncated JSON",
        json.subarray(0, json.length - 9),
        { "content-type": "application/json" },
        400,
        "INVALID_JSON",
      ],
      [
        "JSON that is not an export",
        '{"resourceSpans":{"a":1}}',
        { "content-type": "application/json" },
        400,
        "INVALID_REQUEST",
      ],
      [
        "truncated gzip",
        gzipSync(proto).subarray(0, 40),
        { "content-type": "application/x-protobuf", "content-encoding": "gzip" },
        400,
        "INVALID_ENCODING",
      ],
      [
        "not gzip at all",
        proto,
        { "content-type": "application/x-protobuf", "content-encoding": "gzip" },
        400,
        "INVALID_ENCODING",
      ],
      [
        "a zip bomb",
        gzipSync(Buffer.alloc(20 * 1024 * 1024)),
        { "content-type": "application/x-protobuf", "content-encoding": "gzip" },
        413,
        "PAYLOAD_TOO_LARGE",
      ],
      [
        "over 1 MiB",
        Buffer.alloc(1024 * 1024 + 1),
        { "content-type": "application/x-protobuf" },
        413,
        "PAYLOAD_TOO_LARGE",
      ],
      [
        "brotli",
        proto,
        { "content-type": "application/x-protobuf", "content-encoding": "br" },
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      ],
      ["text/plain", "hello", { "content-type": "text/plain" }, 415, "UNSUPPORTED_MEDIA_TYPE"],
    ];
    for (const [name, body, headers, status, code] of cases) {
      const res = await postRaw(url, t.key, body, headers);
      expect({ name, status: res.status, code: res.body.code }).toEqual({ name, status, code });
      expect(res.body.ok, name).toBe(false);
    }
    const unauthenticated = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf" },
      body: Buffer.from(proto),
    });
    expect(unauthenticated.status).toBe(401);
    expect([...(await allInvocations(t)).keys()].filter((id) => id.startsWith("bad-"))).toEqual([]);
  });
});
