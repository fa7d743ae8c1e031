import { context, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { ExportResultCode } from "@opentelemetry/core";
import { expect } from "vitest";
import { call, type TestContext } from "./harness";
import { getDecision, getInvocation, listInvocations, queue } from "./routes";

// Real OpenTelemetry traffic for the OTLP tests: spans made by the real SDK
// (and the frameworks' own instrumentation), collected in memory, then sent
// by the real OTLP/HTTP exporters to a Settle served over node:http, as
// often as a test wants (a re-send is the same spans exported again).

// Nested spans need a context manager, or a BasicTracerProvider loses their parent links.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

export type Recorder = { provider: BasicTracerProvider; tracer: Tracer; take: () => ReadableSpan[] };

export function recorder(serviceName: string): Recorder {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  return {
    provider,
    tracer: provider.getTracer("settle-otlp-test"),
    take: () => {
      const spans = memory.getFinishedSpans().slice();
      memory.reset();
      return spans;
    },
  };
}

/** One export through a real exporter; resolves with its result (the exporter logs, it does not throw). */
export function exportOnce(exporter: SpanExporter, spans: ReadableSpan[]): Promise<{ ok: boolean; error?: Error }> {
  return new Promise((resolve) =>
    exporter.export(spans, (r) => resolve({ ok: r.code === ExportResultCode.SUCCESS, error: r.error })),
  );
}

export async function invocation(t: TestContext, id: string) {
  const res = await call(getInvocation, { key: t.key, params: { invocation_id: id } });
  expect(res.status, `invocation ${id}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

export async function decisionOf(t: TestContext, id: string) {
  const res = await getDecision(
    new Request(`http://settle.test/api/v1/invocations/${encodeURIComponent(id)}/decision`, {
      headers: { authorization: `Bearer ${t.key}` },
    }),
    {
      params: Promise.resolve({ invocation_id: id }),
    },
  );
  return (await res.json()) as { decision: string; status: string; commit_state: string };
}

/** Every invocation of the test's runtime, by id. */
export async function allInvocations(
  t: TestContext,
): Promise<
  Map<string, { status: string; commit_state: string; tool: string; task_id: string; attempt_count: number }>
> {
  const res = await call(listInvocations, { key: t.key, path: "/api/v1/invocations?limit=200" });
  expect(res.status).toBe(200);
  return new Map(res.body.items.map((i: { invocation_id: string }) => [i.invocation_id, i]));
}

/** The invocation ids the queue holds for the runtime (read with an operator's token). */
export async function queueItems(token: string): Promise<Array<{ invocation_id: string; trace: unknown }>> {
  const res = await call(queue, { key: token, path: "/api/v1/queue?limit=100" });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items;
}

export async function queueIds(token: string): Promise<string[]> {
  return (await queueItems(token)).map((i) => i.invocation_id);
}

/** Raw POST to an OTLP route over HTTP (for malformed bodies). */
export async function postRaw(url: string, key: string, body: Uint8Array | string, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, ...headers },
    body: typeof body === "string" ? body : Buffer.from(body),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed as Record<string, unknown>, contentType: res.headers.get("content-type") };
}
