import { expect, test } from "@playwright/test";
import { docScreenshot } from "./screenshots";
import { readState } from "./server";
import { signIn } from "./sign-in";

// The metrics page shows the numbers GET /api/v1/metrics answers, and every
// number opens the invocations behind it. Its records are on a day of their
// own (2026-10-05), so no other spec's data falls in the range.

const state = readState().console;
const base = state.baseURL;
const DAY = "2026-10-05";

test("the metrics page shows the API's numbers, and a number opens its cases", async ({ page }) => {
  const at = (minute: number) => new Date(Date.parse(`${DAY}T09:00:00Z`) + minute * 60_000).toISOString();
  const record = (
    id: string,
    attempt: number,
    minute: number,
    envelope: unknown,
    extra: Record<string, unknown> = {},
  ) => ({
    event_id: `e2e-metrics-${id}-${attempt}`,
    task_id: `e2e-metrics-${id}`,
    invocation_id: `e2e-metrics-${id}`,
    attempt,
    tool: "charge_card",
    effect_class: "money",
    idempotency_key: `e2e-metrics-${id}`,
    at: at(minute),
    envelope,
    ...extra,
  });
  const ingest = await page.request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${state.key}` },
    data: {
      records: [
        record("unknown", 1, 0, { outcome: "unknown", effect_applied: "unknown" }),
        record("replay", 1, 5, { outcome: "ok", effect_applied: "yes" }),
        record("replay", 2, 10, { outcome: "ok", effect_applied: "yes" }),
      ],
    },
  });
  expect(ingest.status()).toBe(207);

  await signIn(page, base, state.adminEmail, state.adminPassword, "/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Metrics" }).click();
  await expect(page.getByRole("heading", { name: "Trust metrics" })).toBeVisible();

  await page.goto(`${base}/metrics?range=custom&from=${DAY}&to=${DAY}&tool=charge_card`);
  const api = await page.request.get(
    `${base}/api/v1/metrics?from=${DAY}T00:00:00Z&to=2026-10-06T00:00:00Z&tool=charge_card`,
  );
  expect(api.status()).toBe(200);
  const m = await api.json();
  expect(m.unknown_outcomes).toMatchObject({ total: 1, open: 1 });
  expect(m.duplicates_prevented).toMatchObject({ total: 1, receiver_replays: 1 });

  const number = (label: string) => page.getByRole("link", { name: new RegExp(`^${label}: `) }).first();
  await expect(number("Duplicates prevented")).toHaveText(String(m.duplicates_prevented.total));
  await expect(number("Receiver replays")).toHaveText(String(m.duplicates_prevented.receiver_replays));
  await expect(number("Guard denials")).toHaveText(String(m.duplicates_prevented.guard_denials));
  await expect(number("Possible duplicate effects")).toHaveText(String(m.possible_duplicate_effects));
  await expect(number("Unknown outcomes")).toHaveText(String(m.unknown_outcomes.total));
  await expect(number("Still open")).toHaveText(String(m.unknown_outcomes.open));
  await expect(number("Invocations")).toHaveText(String(m.invocations));
  await expect(number("Retries per invocation")).toHaveText(m.retries_per_invocation.toFixed(2));
  await expect(page.getByRole("table", { name: "Per tool" }).locator('tr[data-tool="charge_card"]')).toBeVisible();

  await number("Still open").click();
  await expect(page.getByRole("heading", { name: "Unknown outcomes still open" })).toBeVisible();
  const cases = page.getByRole("table", { name: "Cases" });
  await expect(cases.getByRole("link", { name: "e2e-metrics-unknown" })).toBeVisible();
  await cases.getByRole("link", { name: "e2e-metrics-unknown" }).click();
  await expect(page).toHaveURL(/\/invocations\/e2e-metrics-unknown/);
});

test("a viewer sees no metrics link and is not allowed on the page", async ({ page, request }) => {
  const email = `viewer-metrics-${Date.now()}@example.com`;
  const admin = await request.post(`${base}/api/auth/sign-in/email`, {
    headers: { origin: base },
    data: { email: state.adminEmail, password: state.adminPassword },
  });
  expect(admin.ok()).toBe(true);
  const created = await request.post(`${base}/api/v1/admin/users`, {
    headers: { origin: base },
    data: { email, role: "viewer", name: "Viewer" },
  });
  expect(created.status()).toBe(201);
  const { password } = await created.json();
  await signIn(page, base, email, password, "/");
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Metrics" })).toHaveCount(0);
  await page.goto(`${base}/metrics`);
  await expect(page.getByRole("alert").filter({ hasText: "Not allowed" })).toContainText(
    "trust metrics are for managers and admins",
  );
  expect((await page.request.get(`${base}/api/v1/metrics`)).status()).toBe(403);
});

test("queue size over time draws a single sampled hour (as dots), and a line from two hours", async ({ page }) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/metrics");
  await page.goto(`${base}/metrics?range=24h`);
  const panel = page.locator("figure").filter({ hasText: "Queue size over time" });
  // Recharts draws once the page is hydrated and has measured its panel: beside a busy machine (CI at load 15 on
  // 2 cores) that took longer than the default 5 s and no chart was drawn yet.
  await expect(panel.getByRole("application")).toBeVisible({ timeout: 30_000 });
  // What the page drew from: the API's series for the same range.
  const to = new Date();
  const from = new Date(to.getTime() - 24 * 3_600_000);
  const answer = await page.request.get(`${base}/api/v1/metrics?from=${from.toISOString()}&to=${to.toISOString()}`);
  const sampled = ((await answer.json()).series as Array<{ queue_size_max: number | null }>).filter(
    (p) => p.queue_size_max !== null,
  ).length;
  expect(sampled).toBeGreaterThan(0);
  if (sampled === 1) await expect(panel.locator(".recharts-line-dots circle").first()).toBeVisible();
  else expect(await panel.locator(".recharts-line-curve").first().getAttribute("d")).toMatch(/L/);
  await page.screenshot({ path: docScreenshot("metrics-one-hour.png"), fullPage: true });
});
