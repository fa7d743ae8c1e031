import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import protobuf from "protobufjs";
import { OUT_DIR, readState, settleCli } from "./server";
import { sendCommittedCall } from "./records";
import { signIn } from "./sign-in";

// A runtime's OTLP destination added in the console (issue 41 §3): the admin picks the kind, the collector's
// URL and a header; the console server's own job then exports a settled call to a collector stand-in in this
// process, which decodes it with the official proto.

const state = readState().console;
const base = state.baseURL;
const dir = path.join(OUT_DIR, "otlp-destination");

// The official proto definitions Settle's own OTLP reader uses, read as JSON.
const descriptor = JSON.parse(readFileSync("lib/otlp/trace-service.json", "utf8")) as protobuf.INamespace;
const root = protobuf.Root.fromJSON(descriptor);
const ExportRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const ExportResponse = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse");

type Got = { path: string; headers: IncomingHttpHeaders; body: Buffer };
let server: Server;
const got: Got[] = [];
let collectorUrl = "";

test.beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end(Buffer.from(ExportResponse.encode(ExportResponse.create({})).finish()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  collectorUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
});
test.afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

type Attr = { key: string; value: { stringValue?: string } };
function spanAttributes(body: Buffer): Array<Record<string, string | undefined>> {
  const request = ExportRequest.toObject(ExportRequest.decode(body), { longs: String, bytes: String }) as {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ attributes: Attr[] }> }> }>;
  };
  return request.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => Object.fromEntries(s.attributes.map((a) => [a.key, a.value.stringValue]))),
    ),
  );
}

test("an admin adds an OTLP destination with a header; a settled call arrives there as a span", async ({
  page,
  request,
}) => {
  test.setTimeout(60_000);
  mkdirSync(dir, { recursive: true });
  const runtime = `otlp-agent-${randomBytes(3).toString("hex")}`;
  const key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/webhooks");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  const form = page.getByRole("dialog", { name: "Add an endpoint" });
  await form.getByLabel("Runtime").selectOption(runtime);
  await expect(form.getByLabel("Headers")).toHaveCount(0);
  await form.getByLabel("Kind").selectOption("otlp");
  await form.getByLabel("URL").fill(collectorUrl);
  // A line that is not Name: value is refused in place, with its number.
  await form.getByLabel("Headers").fill("x-team: settle-e2e\nnot a header");
  await form.getByRole("button", { name: "Add endpoint" }).click();
  await expect(form.getByText("Headers, line 2: write it as Name: value.")).toBeVisible();
  // A header Settle sets itself is refused by the API, as a webhook's address rules are.
  await form.getByLabel("Headers").fill("x-team: settle-e2e\nContent-Type: text/plain");
  await form.getByRole("button", { name: "Add endpoint" }).click();
  await expect(form.getByText(/a header Settle sets itself/)).toBeVisible();
  await form.getByLabel("Headers").fill("x-team: settle-e2e");
  await page.screenshot({ path: path.join(dir, "add-otlp-destination.png") });
  await form.getByRole("button", { name: "Add endpoint" }).click();
  await expect(form).toHaveCount(0);

  const row = page.getByTestId("webhook-row").filter({ hasText: runtime });
  await expect(row).toContainText("OTLP traces");
  await expect(row).toContainText(collectorUrl);
  // OTLP exports are not signed: how to check a signature is said only while a (signed) webhook is listed, which
  // other specs sharing this server may have added.
  const listed = (await (await page.request.get(`${base}/api/v1/admin/webhooks`)).json()) as {
    items: Array<{ kind: string }>;
  };
  const signed = listed.items.some((e) => e.kind !== "otlp");
  await expect(page.getByText("How a receiver checks that an event came from Settle")).toHaveCount(signed ? 1 : 0);
  await page.screenshot({ path: path.join(dir, "webhooks-with-otlp.png") });
  await row.getByRole("link", { name: /Delivery log/ }).click();
  await expect(page.getByRole("heading", { name: `OTLP traces for ${runtime}` })).toBeVisible();
  await expect(page.getByTestId("otlp-endpoint")).toContainText("with the headers x-team");
  // Nothing is signed for a collector: no secret to rotate.
  await expect(page.getByRole("button", { name: "Rotate secret" })).toHaveCount(0);

  const id = await sendCommittedCall(request, base, key);
  // The server's job runs every few seconds.
  await expect.poll(() => got.length, { timeout: 20_000 }).toBeGreaterThan(0);
  const exported = got[0]!;
  expect(exported.path).toBe("/v1/traces");
  expect(exported.headers["x-team"]).toBe("settle-e2e");
  expect(exported.headers["content-type"]).toBe("application/x-protobuf");
  expect(spanAttributes(exported.body)).toEqual([
    expect.objectContaining({ "settle.invocation_id": id, "settle.runtime": runtime, "settle.status": "succeeded" }),
  ]);
  const delivery = page.getByTestId("delivery-row").first();
  await expect(delivery).toContainText("Delivered", { timeout: 15_000 });
  // The span is about one invocation: the log links it, as a webhook event's row does.
  await expect(delivery.getByRole("link", { name: id })).toHaveAttribute(
    "href",
    `/invocations/${id}?runtime=${runtime}`,
  );
  await page.screenshot({ path: path.join(dir, "otlp-endpoint-page.png") });
});

test("an admin replaces an OTLP destination's headers, seeing the old ones masked; the next export carries the new", async ({
  page,
  request,
}) => {
  test.setTimeout(60_000);
  mkdirSync(dir, { recursive: true });
  const runtime = `otlp-hdr-${randomBytes(3).toString("hex")}`;
  const key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/webhooks");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  const add = page.getByRole("dialog", { name: "Add an endpoint" });
  await add.getByLabel("Runtime").selectOption(runtime);
  await add.getByLabel("Kind").selectOption("otlp");
  await add.getByLabel("URL").fill(collectorUrl);
  await add.getByLabel("Headers").fill("x-team: old-key-e2e");
  await add.getByRole("button", { name: "Add endpoint" }).click();
  await expect(add).toHaveCount(0);

  const row = page.getByTestId("webhook-row").filter({ hasText: runtime });
  await row.getByRole("button", { name: /Edit headers/ }).click();
  const edit = page.getByRole("dialog", { name: `Headers for ${runtime}'s OTLP destination` });
  // The names it sends, each value masked: Settle never answers a value back.
  await expect(edit.getByRole("list", { name: "Headers sent now" })).toContainText("x-team: ••••••••");
  await expect(edit).not.toContainText("old-key-e2e");
  // Checked as at creation, refused in place.
  await edit.getByLabel("New headers").fill("Host: elsewhere.example");
  await edit.getByRole("button", { name: "Save headers" }).click();
  await expect(edit.getByText(/a header Settle sets itself/)).toBeVisible();
  await edit.getByLabel("New headers").fill("x-team: new-key-e2e\nx-dataset: settle-e2e");
  await page.screenshot({ path: path.join(dir, "edit-otlp-headers.png") });
  await edit.getByRole("button", { name: "Save headers" }).click();
  await expect(edit).toHaveCount(0);
  await expect(page.getByText(`${runtime}'s OTLP destination now sends the headers x-dataset, x-team.`)).toBeVisible();
  await page.screenshot({ path: path.join(dir, "otlp-headers-saved.png") });
  await row.getByRole("link", { name: /Delivery log/ }).click();
  await expect(page.getByTestId("otlp-endpoint")).toContainText("with the headers x-dataset, x-team");
  await expect(page.getByRole("button", { name: /Edit headers/ })).toBeVisible();

  const id = await sendCommittedCall(request, base, key);
  const exportOf = () => got.find((g) => spanAttributes(g.body).some((a) => a["settle.invocation_id"] === id));
  await expect.poll(() => exportOf() !== undefined, { timeout: 20_000 }).toBe(true);
  expect(exportOf()!.headers).toMatchObject({ "x-team": "new-key-e2e", "x-dataset": "settle-e2e" });
});
