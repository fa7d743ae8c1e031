import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { OUT_DIR, readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// Admin → Tool catalog on the console server (PostgreSQL): an admin gives a
// pattern an effect class, sees it listed, changes it, and the runtime reads
// it from its own GET /api/v1/tool-catalog. Patterns are unique per run.

const state = readState().console;
const base = state.baseURL;

test("an admin adds a catalog entry, sees it listed and checked, changes its class, and the runtime reads it", async ({
  page,
  request,
}) => {
  const pattern = `refund_${randomBytes(3).toString("hex")}_*`;
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/tool-catalog");
  await expect(page.getByRole("heading", { name: "Tool catalog" })).toBeVisible();

  const form = page.getByRole("form", { name: "Add a catalog entry" });
  await form.getByLabel("Runtime").selectOption("billing-agent");
  await form.getByLabel("Tool name or pattern").fill(pattern);
  await form.getByLabel("Effect class").selectOption("money");
  await form.getByRole("button", { name: "Add entry" }).click();
  await expect(
    page.getByRole("status").filter({ hasText: `Added ${pattern} → money for billing-agent.` }),
  ).toBeVisible();

  const row = page.getByTestId("catalog-row").filter({ hasText: pattern });
  await expect(row).toHaveCount(1);
  await expect(row.getByLabel(`Effect class of ${pattern}`)).toHaveValue("money");

  // The same pattern again is refused, with Settle's reason in place.
  await form.getByLabel("Tool name or pattern").fill(pattern);
  await form.getByRole("button", { name: "Add entry" }).click();
  await expect(form.getByRole("alert")).toContainText("already has");

  // The page checks a tool name against the runtime's catalog with the same rule as ingest.
  await page.getByLabel("Show runtime").selectOption("billing-agent");
  const tool = pattern.replace("*", "full");
  await page.getByLabel("Check a tool name against billing-agent's catalog").fill(tool);
  await expect(page.getByRole("status").filter({ hasText: `${tool} is money.` })).toBeVisible();
  await page.screenshot({ path: `${OUT_DIR}/screenshots/tool-catalog.png`, fullPage: true });

  // Volatile arguments: left out of the arguments' digest of its tools; empty is Settle's default list.
  const volatile = row.getByLabel(`Volatile arguments of ${pattern}`);
  await expect(volatile).toHaveAttribute("placeholder", "default: idempotency_key, request_id, nonce, timestamp");
  await volatile.fill("memo, attempt_note");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(
    page.getByRole("status").filter({ hasText: `${pattern}'s digest leaves out memo, attempt_note.` }),
  ).toBeVisible();

  await row.getByLabel(`Effect class of ${pattern}`).selectOption("destructive");
  await expect(
    page.getByRole("status").filter({ hasText: `${pattern} is now destructive for billing-agent.` }),
  ).toBeVisible();
  await page.reload();
  await expect(
    page.getByTestId("catalog-row").filter({ hasText: pattern }).getByLabel(`Effect class of ${pattern}`),
  ).toHaveValue("destructive");

  const own = await request.get(`${base}/api/v1/tool-catalog`, { headers: { authorization: `Bearer ${state.key}` } });
  expect(own.status()).toBe(200);
  expect((await own.json()).items).toContainEqual({
    pattern,
    effect_class: "destructive",
    volatile_args: ["memo", "attempt_note"],
    verify: null,
  });

  await page
    .getByTestId("catalog-row")
    .filter({ hasText: pattern })
    .getByRole("button", { name: `Remove ${pattern} from billing-agent` })
    .click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove entry" }).click();
  await expect(page.getByTestId("catalog-row").filter({ hasText: pattern })).toHaveCount(0);
});

test("a catalog change made in the console reaches OTLP ingest, served by the fast lane, at once", async () => {
  const run = randomBytes(3).toString("hex");
  const runtime = `catalog-lane-${run}`;
  const key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  const token = settleCli(state.databaseUrl, ["tokens", "create", "--email", state.adminEmail]);
  const admin = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const tool = `move_funds_${run}`;
  const created = await fetch(`${base}/api/v1/admin/tool-catalog`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ runtime, pattern: tool, effect_class: "read" }),
  });
  expect(created.status).toBe(201);
  const entry = (await created.json()) as { id: string };

  // A failed call of a tool the catalog calls a read: not committed, retry allowed. This also fills the lane's copy of the catalog.
  const span = async (callId: string) => {
    const res = await fetch(`${base}/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: failedToolSpan(tool, callId),
    });
    expect(res.headers.get("x-settle-served-by")).toBe("fast-lane");
    expect(res.status).toBe(200);
    const invocation = await fetch(`${base}/api/v1/invocations/${encodeURIComponent(callId)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return (await invocation.json()) as { effect_class: string; status: string; commit_state: string };
  };
  expect(await span(`call-a-${run}`)).toMatchObject({ effect_class: "read", commit_state: "not_committed" });

  // The admin changes it to money; the very next failed call must be a money call whose outcome is unknown.
  const changed = await fetch(`${base}/api/v1/admin/tool-catalog/${entry.id}`, {
    method: "PATCH",
    headers: { ...admin, origin: base },
    body: JSON.stringify({ effect_class: "money" }),
  });
  expect(changed.status).toBe(200);
  expect(await span(`call-b-${run}`)).toMatchObject({
    effect_class: "money",
    status: "outcome_unknown",
    commit_state: "unknown",
  });
});

/** An OTLP/JSON export of one execute_tool span that ended in an error (a timeout, say). */
function failedToolSpan(tool: string, callId: string): string {
  const hex = (n: number) => randomBytes(n / 2).toString("hex");
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "catalog-agent" } }] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: hex(32),
                spanId: hex(16),
                name: `execute_tool ${tool}`,
                kind: 1,
                startTimeUnixNano: "1763632800000000000",
                endTimeUnixNano: "1763632801000000000",
                attributes: [
                  { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
                  { key: "gen_ai.tool.name", value: { stringValue: tool } },
                  { key: "gen_ai.tool.call.id", value: { stringValue: callId } },
                ],
                status: { code: 2, message: "timed out" },
              },
            ],
          },
        ],
      },
    ],
  });
}
