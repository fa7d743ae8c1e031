import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import descriptor from "@/lib/otlp/trace-service.json";
import { actOnInvocation } from "@/lib/invocations/act";
import { webhookDeliveryPageSchema } from "@/lib/webhooks/deliveries";
import { createWebhookEndpoint } from "@/lib/webhooks/endpoints";
import { deliverDue } from "@/lib/webhooks/deliver";
import { fanOutTransitions } from "@/lib/webhooks/fan-out";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getInvocation, ingest, otlpTraces } from "./routes";

// Section 3 of issue 41: a runtime's OTLP destination gets each settled or escalated call as a span, through
// the webhook outbox (retries, the delivery log), in a body a collector decodes with the official proto.

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const ExportRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const ExportResponse = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse");

type Got = { path: string; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** A collector stand-in: keeps what it is sent, answers an empty ExportTraceServiceResponse (or 503 while failing). */
async function startCollector() {
  const got: Got[] = [];
  let failing = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks) });
      if (failing > 0) {
        failing--;
        res.writeHead(503).end("busy");
        return;
      }
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end(Buffer.from(ExportResponse.encode(ExportResponse.create({})).finish()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    got,
    failNext: (n: number) => void (failing = n),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const hex = (b64: string) => Buffer.from(b64, "base64").toString("hex");
type Attr = { key: string; value: { stringValue?: string } };
const attrs = (list: Attr[] = []) => Object.fromEntries(list.map((a) => [a.key, a.value.stringValue]));

function spansOf(body: Buffer) {
  const request = ExportRequest.toObject(ExportRequest.decode(body), {
    longs: String,
    bytes: String,
    defaults: false,
  }) as any;
  return request.resourceSpans.flatMap((rs: any) =>
    rs.scopeSpans.flatMap((ss: any) =>
      ss.spans.map((s: any) => ({
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: s.parentSpanId ? hex(s.parentSpanId) : null,
        name: s.name,
        attributes: attrs(s.attributes),
        events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: attrs(e.attributes) })),
        links: (s.links ?? []).map((l: any) => ({
          traceId: hex(l.traceId),
          spanId: hex(l.spanId),
          attributes: attrs(l.attributes),
        })),
        resource: attrs(rs.resource?.attributes),
      })),
    ),
  );
}

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("outcomes exported to a runtime's OTLP destination (PostgreSQL)", () => {
  let t: TestContext;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let endpointId: string;
  const now = new Date();

  beforeAll(async () => {
    t = await openSettle("postgres", {
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_PUBLIC_URL: "https://settle.example.com",
    });
    collector = await startCollector();
    ({
      endpoint: { id: endpointId },
    } = await createWebhookEndpoint(
      t.db,
      { runtime: t.runtime, url: collector.url, kind: "otlp", headers: { "x-honeycomb-team": "k-123" } },
      "admin@example.com",
    ));
  });
  afterAll(async () => {
    await collector?.close();
    await t?.teardown();
  });

  it("a settled call from OTLP arrives as a child span of its tool call, linked to it, with settle.* attributes", async () => {
    const start = BigInt(now.getTime() - 2_000) * 1_000_000n;
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "shop-agent" } }] },
          scopeSpans: [
            {
              scope: { name: "agent" },
              spans: [
                {
                  traceId: TRACE,
                  spanId: SPAN,
                  name: "execute_tool create_refund",
                  kind: 1,
                  startTimeUnixNano: String(start),
                  endTimeUnixNano: String(start + 500_000_000n),
                  attributes: [
                    { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
                    { key: "gen_ai.tool.name", value: { stringValue: "create_refund" } },
                    { key: "gen_ai.tool.call.id", value: { stringValue: "call-otlp-1" } },
                  ],
                  status: { code: 1 },
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await call(otlpTraces, { key: t.key, path: "/v1/traces", raw: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect((await call(getInvocation, { key: t.key, params: { invocation_id: "call-otlp-1" } })).body.status).toBe(
      "succeeded",
    );

    await fanOutTransitions(t.db, now);
    collector.failNext(1);
    expect(await deliverDue(t.db, now, { allowPrivate: true })).toMatchObject({ tried: 1, retrying: 1 });
    // Retried by the outbox, as every webhook: the next try after the back-off.
    expect(await deliverDue(t.db, new Date(now.getTime() + 3_600_000), { allowPrivate: true })).toMatchObject({
      delivered: 1,
    });
    expect(collector.got).toHaveLength(2);
    const sent = collector.got[1]!;
    expect(sent.headers["content-type"]).toBe("application/x-protobuf");
    expect(sent.headers["x-honeycomb-team"]).toBe("k-123");
    expect(collector.got[0]!.body.equals(sent.body)).toBe(true);
    const [span] = spansOf(sent.body);
    expect(span).toMatchObject({
      traceId: TRACE,
      parentSpanId: SPAN,
      name: "settle.settled",
      links: [{ traceId: TRACE, spanId: SPAN, attributes: { "settle.link": "tool_call" } }],
      resource: { "service.name": "settle" },
      attributes: {
        "settle.commit_state": "committed",
        "settle.status": "succeeded",
        "settle.resolution_by": "runtime",
        "settle.decision": "do_not_retry",
        "settle.invocation_id": "call-otlp-1",
        "settle.task_id": TRACE,
        "settle.console_url": `https://settle.example.com/invocations/call-otlp-1?runtime=${t.runtime}`,
      },
    });
    expect(span.events).toEqual([expect.objectContaining({ name: "settle.settled" })]);

    const [delivery] = await t.db.driver.query<{ status: string; event_type: string; tries: number }>(
      `SELECT d.status, d.event_type, (SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = d.id) AS tries
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.kind = 'otlp'`,
    );
    expect(delivery).toEqual({ status: "delivered", event_type: "otlp.outcome", tries: 2 });
  });

  it("an escalated call without trace ids starts a trace of its own; webhook events never go to the OTLP endpoint", async () => {
    await call(ingest, {
      key: t.key,
      body: {
        records: [
          {
            event_id: "esc-1-o1",
            task_id: "ord-3",
            invocation_id: "esc-1",
            attempt: 1,
            tool: "charge_card",
            effect_class: "money",
            envelope: { title: "Gateway Timeout", status: 504 },
          },
        ],
      },
    });
    const inv = (await call(getInvocation, { key: t.key, params: { invocation_id: "esc-1" } })).body;
    const acted = await actOnInvocation(
      t.db,
      { invocationId: "esc-1" },
      { action: "escalate", note: "amount looks wrong" },
      { actor: "ana@example.com", version: inv.version },
    );
    expect(acted.ok).toBe(true);
    collector.got.length = 0;
    await fanOutTransitions(t.db, now);
    await deliverDue(t.db, new Date(now.getTime() + 7_200_000), { allowPrivate: true });
    // The unknown outcome is neither settled nor escalated: only the escalation is a span.
    expect(collector.got).toHaveLength(1);
    const [span] = spansOf(collector.got[0]!.body);
    expect(span.parentSpanId).toBeNull();
    expect(span.links).toEqual([]);
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span).toMatchObject({
      name: "settle.escalated",
      attributes: {
        "settle.status": "escalated",
        "settle.commit_state": "unknown",
        "settle.resolution_by": "operator",
        "settle.decision": "wait",
        "settle.invocation_id": "esc-1",
      },
    });
    const types = await t.db.driver.query<{ event_type: string }>(
      `SELECT DISTINCT d.event_type FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.kind = 'otlp'`,
    );
    expect(types).toEqual([{ event_type: "otlp.outcome" }]);
  });

  it("refuses a header Settle sets itself or a name that is not a header, saying which and why", async () => {
    const admin = (await createOperator(t.db, "admin")).token;
    const add = (headers: Record<string, string>) =>
      call(apiRoutes["/api/v1/admin/webhooks"].POST!, {
        key: admin,
        path: "/api/v1/admin/webhooks",
        body: { runtime: t.runtime, url: collector.url, kind: "otlp", headers },
      });
    const reserved = await add({ "x-team": "a", "Content-Type": "text/plain" });
    expect(reserved.status).toBe(400);
    expect(JSON.stringify(reserved.body)).toContain("headers.Content-Type: a header Settle sets itself");
    const odd = await add({ "not a name": "a" });
    expect(odd.status).toBe(400);
    expect(JSON.stringify(odd.body)).toContain("headers.not a name: not a header name");
  });

  it("the delivery log names the invocation each exported span is about, in the declared shape", async () => {
    const admin = (await createOperator(t.db, "admin")).token;
    const log = await call(apiRoutes["/api/v1/admin/webhooks/{endpoint_id}/deliveries"].GET!, {
      key: admin,
      path: `/api/v1/admin/webhooks/${endpointId}/deliveries`,
      params: { endpoint_id: endpointId },
    });
    expect(log.status).toBe(200);
    expect(webhookDeliveryPageSchema.safeParse(log.body).error).toBeUndefined();
    const byInvocation = (log.body.items as Array<{ event_type: string; invocation_id: string | null }>)
      .map((d) => [d.event_type, d.invocation_id])
      .sort();
    expect(byInvocation).toEqual([
      ["otlp.outcome", "call-otlp-1"],
      ["otlp.outcome", "esc-1"],
    ]);
  });

  it("an admin replaces the headers: answered and audited by name only, checked as at creation, sent from the next export", async () => {
    const admin = (await createOperator(t.db, "admin")).token;
    const patch = (id: string, body: Record<string, unknown>) =>
      call(apiRoutes["/api/v1/admin/webhooks/{endpoint_id}"].PATCH!, {
        method: "PATCH",
        key: admin,
        path: `/api/v1/admin/webhooks/${id}`,
        params: { endpoint_id: id },
        body,
      });
    const replaced = await patch(endpointId, { headers: { "x-honeycomb-team": "k-456", "x-dataset": "settle" } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ kind: "otlp", header_names: ["x-dataset", "x-honeycomb-team"] });
    expect(JSON.stringify(replaced.body)).not.toContain("k-456");

    const reserved = await patch(endpointId, { headers: { Host: "elsewhere" } });
    expect(reserved.status).toBe(400);
    expect(JSON.stringify(reserved.body)).toContain("headers.Host: a header Settle sets itself");
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, "v"]));
    expect(JSON.stringify((await patch(endpointId, { headers: many })).body)).toContain("at most 20 headers");
    expect((await patch(endpointId, { headers: { "x-a": "one\r\nx-b: two" } })).status).toBe(400);
    const signed = await call(apiRoutes["/api/v1/admin/webhooks"].POST!, {
      key: admin,
      path: "/api/v1/admin/webhooks",
      body: { runtime: t.runtime, url: "http://127.0.0.1:9/hook" },
    });
    const notOtlp = await patch(signed.body.endpoint.id, { headers: { "x-team": "a" } });
    expect(notOtlp.body).toMatchObject({ code: "INVALID_REQUEST", safe_details: { path: "headers" } });
    expect((await patch(signed.body.endpoint.id, { enabled: false })).body.enabled).toBe(false);

    const audit = await t.db.driver.query<{ before: Record<string, unknown>; after: Record<string, unknown> }>(
      `SELECT before, after FROM admin_actions WHERE action = 'webhook_endpoint_updated' AND target_id = $1`,
      [endpointId],
    );
    expect(audit).toEqual([
      {
        before: expect.objectContaining({ header_names: ["x-honeycomb-team"] }),
        after: expect.objectContaining({ header_names: ["x-dataset", "x-honeycomb-team"], header_values: "replaced" }),
      },
    ]);
    expect(JSON.stringify(audit)).not.toMatch(/k-123|k-456/);

    collector.got.length = 0;
    await call(ingest, {
      key: t.key,
      body: {
        records: [
          {
            event_id: "hdr-1-o1",
            task_id: "ord-4",
            invocation_id: "hdr-1",
            attempt: 1,
            tool: "create_invoice",
            effect_class: "create",
            envelope: { outcome: "ok", effect_applied: "yes" },
          },
        ],
      },
    });
    await fanOutTransitions(t.db, now);
    await deliverDue(t.db, new Date(now.getTime() + 10_800_000), { allowPrivate: true });
    expect(collector.got).toHaveLength(1);
    expect(collector.got[0]!.headers).toMatchObject({ "x-honeycomb-team": "k-456", "x-dataset": "settle" });

    const none = await patch(endpointId, { headers: {} });
    expect(none.body.header_names).toEqual([]);
  });
});
