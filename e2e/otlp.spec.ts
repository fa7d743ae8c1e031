import { randomBytes } from "node:crypto";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { expect, test } from "@playwright/test";
import { generateText, stepCountIs, tool } from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { z } from "zod";
import { docScreenshot } from "./screenshots";
import { OUT_DIR, readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// An agent on the Vercel AI SDK, its telemetry exported unchanged (the OTLP
// protobuf exporter, pointed at the console server's /v1/traces): a booking
// whose tool timed out is an unknown outcome in the queue, its trace the
// task; its page shows the convention, the trace id and the arguments; an
// operator settles it as committed, and the decision API, asked by the
// tool-call id, says not to retry.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");
const runtime = `otlp-e2e-${run}`;
const password = "otlp e2e password";
const operator = `otlp-op-${run}@example.com`;
const callId = `call-book-${run}`;
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

let key: string;
let traceId: string;

test.beforeAll(async () => {
  // Two CLI runs and an agent turn on a shared machine.
  test.setTimeout(120_000);
  settleCli(state.databaseUrl, ["users", "create", "--email", operator, "--role", "operator", "--password", password]);
  key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new OTLPTraceExporter({ url: `${base}/v1/traces`, headers: { Authorization: `Bearer ${key}` } });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "travel-agent" }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("e2e");
  let step = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      step += 1;
      return step === 1
        ? {
            content: [
              {
                type: "tool-call",
                toolCallId: callId,
                toolName: "book_flight",
                input: JSON.stringify({ flight: `TP-${run}`, seat: "12A" }),
              },
            ],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: "text", text: "The booking may or may not have gone through." }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: [],
          };
    },
  });
  await tracer.startActiveSpan("agent turn", async (root) => {
    traceId = root.spanContext().traceId;
    await generateText({
      model,
      prompt: "Book TP flight, seat 12A.",
      stopWhen: stepCountIs(3),
      experimental_telemetry: { isEnabled: true, tracer },
      tools: {
        book_flight: tool({
          inputSchema: z.object({ flight: z.string(), seat: z.string() }),
          execute: async (): Promise<{ booking: string }> => {
            throw new Error("Booking gateway timed out after 30000 ms");
          },
        }),
      },
    });
    root.end();
  });
  await provider.forceFlush();
  await provider.shutdown();
  context.disable();
});

test("an OTLP-sourced unknown call is in the queue with its convention, trace id and arguments; settled, the decision API answers for its tool-call id", async ({
  page,
}) => {
  await signIn(page, base, operator, password, `/?runtime=${runtime}`);
  await page.goto(`${base}/?runtime=${runtime}`);
  const row = page.getByTestId("invocation-row").filter({ hasText: "book_flight" });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("Outcome unknown");
  // The task is the span's trace: shown as its service and a short trace id, the whole id on hover.
  await expect(row.getByTestId("trace-task")).toHaveText(`travel-agent · trace ${traceId.slice(0, 8)}…`);
  await expect(row.getByTestId("trace-task")).toHaveAttribute("title", `trace ${traceId}`);
  await expect(row).not.toContainText(traceId);
  await expect(row).toContainText(callId);
  await page.screenshot({ path: docScreenshot("queue-otlp-row.png") });
  await row.getByRole("link", { name: "book_flight" }).click();

  await expect(page.getByRole("heading", { level: 1 })).toContainText("book_flight");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Outcome unknown");
  const span = page.getByTestId("span-facts").last();
  await expect(span.getByTestId("span-convention")).toHaveText("otel-vercel-ai");
  await expect(span.getByTestId("span-trace-id")).toHaveText(traceId);
  await expect(span.getByTestId("span-arguments")).toContainText(`"flight": "TP-${run}"`);
  // The intent names the span and links its trace; the span is kept whole once, on the outcome.
  const intent = page.getByTestId("span-facts").first();
  await expect(intent.getByTestId("span-trace-id")).toHaveText(traceId);
  await expect(intent.getByTestId("span-kept-on-outcome")).toBeVisible();
  await expect(page.locator("main")).toContainText("Booking gateway timed out after 30000 ms");
  await page.screenshot({ path: `${OUT_DIR}/screenshots/otlp-invocation.png`, fullPage: true });

  const before = await (
    await fetch(`${base}/api/v1/invocations/${encodeURIComponent(callId)}/decision`, {
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  expect(before).toMatchObject({ decision: "wait", status: "outcome_unknown" });

  const actions = page.getByRole("region", { name: "What you can do" });
  await actions.getByRole("button", { name: /^Mark reconciled/ }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel(/^Committed/).check();
  await dialog.getByLabel("Evidence note (required)").fill("The airline shows booking for seat 12A: it went through.");
  await dialog.getByRole("button", { name: "Settle as committed" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Reconciled");

  const after = await (
    await fetch(`${base}/api/v1/invocations/${encodeURIComponent(callId)}/decision`, {
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  expect(after).toMatchObject({ decision: "do_not_retry", commit_state: "committed" });
});
