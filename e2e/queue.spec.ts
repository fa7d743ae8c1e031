import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { docScreenshot } from "./screenshots";
import { OUT_DIR, readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// The queue on the PostgreSQL console: live rows that keep the operator's
// place, bulk actions with a result per item, the keyboard, filters in the
// URL, saved views, what a viewer sees, and screenshots at realistic data.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");
const password = "queue e2e password";
const op = `queue-op-${run}@example.com`;
const viewer = `queue-viewer-${run}@example.com`;
const live = `queue-live-${run}`;
const bulk = `queue-bulk-${run}`;
let opToken = "";
const keys: Record<string, string> = {};

test.beforeAll(() => {
  settleCli(state.databaseUrl, ["users", "create", "--email", op, "--role", "operator", "--password", password]);
  settleCli(state.databaseUrl, ["users", "create", "--email", viewer, "--role", "viewer", "--password", password]);
  opToken = settleCli(state.databaseUrl, ["tokens", "create", "--email", op]);
  for (const runtime of [live, bulk]) keys[runtime] = settleCli(state.databaseUrl, ["keys", "create", runtime]);
});

type Spec = { id: string; tool?: string; cls?: string; ageS?: number; envelope?: object };
const unknownEnvelope = {
  ok: false,
  commit_state: "unknown",
  code: "UPSTREAM_TIMEOUT",
  user_message: "We are checking whether this went through.",
};
const approvalEnvelope = {
  ok: false,
  commit_state: "not_committed",
  next_action: "request_approval",
  code: "APPROVAL_REQUIRED",
  category: "authorization",
};

async function ingest(request: APIRequestContext, runtime: string, specs: Spec[]) {
  const records = specs.map((s) => ({
    event_id: `${s.id}-o1`,
    task_id: `task-${s.id}`,
    invocation_id: s.id,
    attempt: 1,
    tool: s.tool ?? "create_order",
    effect_class: s.cls ?? "create",
    idempotency_key: `key-${s.id}`,
    at: new Date(Date.now() - (s.ageS ?? 60) * 1000).toISOString(),
    envelope: s.envelope ?? unknownEnvelope,
  }));
  const res = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${keys[runtime]}` },
    data: { records },
  });
  expect(res.status()).toBe(207);
  expect((await res.json()).rejected).toBe(0);
}

const rows = (page: Page) => page.getByTestId("invocation-row");
const row = (page: Page, id: string) => rows(page).filter({ has: page.getByText(id, { exact: true }) });

test.describe.configure({ mode: "serial" });

test("a new unknown invocation appears within 2 s without a reload, keeping selection and scroll", async ({
  page,
  request,
}) => {
  await ingest(
    request,
    live,
    Array.from({ length: 60 }, (_, n) => ({ id: `live-${run}-${String(n).padStart(2, "0")}`, ageS: 600 + n })),
  );
  await signIn(page, base, op, password);
  await page.goto(`${base}/?runtime=${live}`);
  await expect(page.getByTestId("queue-total")).toHaveText("· 60 need a person · filtered");
  await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));

  const picked = row(page, `live-${run}-20`);
  await picked.getByRole("checkbox").click();
  await picked.scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, 300));
  const scrolled = await page.evaluate(() => window.scrollY);
  expect(scrolled).toBeGreaterThan(300);

  // Destructive sorts before create: the new row lands above everything the operator is looking at.
  await ingest(request, live, [{ id: `live-${run}-new`, tool: "delete_rows", cls: "destructive", ageS: 1 }]);
  await expect(row(page, `live-${run}-new`)).toBeAttached({ timeout: 2_000 });
  await expect(rows(page).first()).toContainText(`live-${run}-new`);
  await expect(page.getByTestId("queue-total")).toHaveText("· 61 need a person · filtered");

  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
  await expect(picked.getByRole("checkbox")).toBeChecked();
  await expect(page.getByTestId("selection-count")).toHaveText("1 selected");
  expect(await page.evaluate(() => window.scrollY)).toBeGreaterThanOrEqual(scrolled);
  await expect(picked).toBeInViewport();
});

test("bulk: one stale and one refused are reported, the rest are applied", async ({ page, request }) => {
  const ids = ["a", "b", "c", "d"].map((x) => `bulk-${run}-${x}`);
  await ingest(request, bulk, [
    ...ids.map((id, n) => ({ id, ageS: 300 + n })),
    { id: `bulk-${run}-approval`, tool: "send_email", cls: "send", envelope: approvalEnvelope },
  ]);
  await signIn(page, base, op, password);
  await page.goto(`${base}/?runtime=${bulk}`);
  await expect(rows(page)).toHaveCount(5);
  await page.getByLabel("Select all 5 shown").check();
  await expect(page.getByTestId("selection-count")).toHaveText("5 selected");

  // Someone else acts on one of them after it was selected.
  const stale = ids[1]!;
  const current = await (
    await request.get(`${base}/api/v1/invocations/${stale}?runtime=${bulk}`, {
      headers: { authorization: `Bearer ${opToken}` },
    })
  ).json();
  const acted = await request.post(`${base}/api/v1/invocations/${stale}/actions`, {
    headers: { authorization: `Bearer ${opToken}` },
    data: { action: "comment", note: "looking at this one", version: current.version, runtime: bulk },
  });
  expect(acted.status()).toBe(200);
  await expect(page.getByText("1 changed since you selected it")).toBeVisible({ timeout: 3_000 });

  await page.getByRole("region", { name: "Selection" }).getByRole("button", { name: "Request verification" }).click();
  const dialog = page.getByRole("dialog", { name: "Request verification: 5 invocations" });
  await dialog.getByRole("button", { name: "Request verification 5" }).click();
  await expect(dialog.getByTestId("bulk-summary")).toHaveText("3 done · 2 refused");
  await expect(dialog.locator("progress")).toHaveAttribute("value", "5");
  const results = dialog.getByTestId("bulk-result");
  await expect(results).toHaveCount(5);
  await expect(results.filter({ hasText: stale })).toContainText("Changed since you selected it");
  await expect(results.filter({ hasText: `bulk-${run}-approval` })).toContainText("Not allowed in its current state");
  await expect(results.filter({ hasText: `bulk-${run}-approval` })).toContainText("Awaiting approval");
  await expect(dialog.locator('[data-outcome="done"]')).toHaveCount(3);
  await expect(dialog.locator('[data-outcome="done"]').first()).toContainText("Verifying");
  await page.screenshot({ path: `${OUT_DIR}/screenshots/queue-bulk-result.png` });
  await dialog.getByRole("button", { name: "Done" }).click();
  await expect(page.getByTestId("selection-count")).toHaveCount(0);
  await expect(row(page, ids[0]!)).toContainText("Verifying");
  await expect(row(page, stale)).toContainText("Outcome unknown");
});

test("keyboard: j/k move, x selects, ? lists every shortcut, an action key opens its form, Enter opens the invocation", async ({
  page,
}) => {
  await signIn(page, base, op, password);
  await page.goto(`${base}/?runtime=${live}`);
  await expect(rows(page).first()).toBeVisible();
  // Rows are painted by the server before the page's script listens; k stays on the first row however often it runs.
  await expect(async () => {
    await page.keyboard.press("k");
    await expect(rows(page).nth(0)).toHaveAttribute("data-focused", "true", { timeout: 250 });
  }).toPass();
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  await expect(rows(page).nth(2)).toHaveAttribute("data-focused", "true");
  await expect(rows(page).nth(2)).toBeFocused();
  await page.keyboard.press("k");
  await expect(rows(page).nth(1)).toHaveAttribute("data-focused", "true");
  await page.keyboard.press("x");
  await expect(rows(page).nth(1).getByRole("checkbox")).toBeChecked();
  await page.keyboard.press("x");
  await expect(rows(page).nth(1).getByRole("checkbox")).not.toBeChecked();

  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(help).toBeVisible();
  for (const text of [
    "Next row",
    "Previous row",
    "Open the invocation",
    "Request verification",
    "Mark reconciled",
    "Escalate",
    "Claim",
    "Comment",
  ]) {
    await expect(help).toContainText(text);
  }
  await page.screenshot({ path: `${OUT_DIR}/screenshots/queue-keyboard-help.png` });
  await page.keyboard.press("Escape");
  await expect(help).toBeHidden();

  await page.keyboard.press("/");
  await expect(page.getByRole("searchbox")).toBeFocused();
  await page.keyboard.type("jk");
  await expect(rows(page).nth(1)).toHaveAttribute("data-focused", "true"); // typing moved nothing
  await page.keyboard.press("Escape");
  await page.getByRole("searchbox").fill("");

  await rows(page).nth(1).focus();
  await page.keyboard.press("v");
  const form = page.getByRole("dialog", { name: /^Request verification: / });
  await expect(form).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(form).toBeHidden();

  const id = (await rows(page).nth(1).getAttribute("data-key"))!;
  const [, invocationId] = JSON.parse(id) as [string, string];
  await rows(page).nth(1).focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(`${base}/invocations/${invocationId}?runtime=${live}`);
});

test("filters live in the URL: they survive a reload, back and forward; views can be saved", async ({ page }) => {
  await signIn(page, base, op, password);
  await page.goto(`${base}/?runtime=${live}`);
  await page.getByLabel("Effect class", { exact: true }).selectOption("destructive");
  await expect(page).toHaveURL(`${base}/?runtime=${live}&effect_class=destructive`);
  await expect(rows(page)).toHaveCount(1);
  await page.getByRole("searchbox").fill(`live-${run}-0`);
  await expect(page).toHaveURL(new RegExp(`q=live-${run}-0$`));
  await expect(page.getByRole("heading", { name: "No invocation matches these filters." })).toBeVisible();

  await page.reload();
  await expect(page.getByLabel("Effect class", { exact: true })).toHaveValue("destructive");
  await expect(page.getByRole("searchbox")).toHaveValue(`live-${run}-0`);
  await expect(page.getByRole("heading", { name: "No invocation matches these filters." })).toBeVisible();

  await page.goBack();
  await expect(page).toHaveURL(`${base}/?runtime=${live}`);
  await expect(page.getByLabel("Effect class", { exact: true })).toHaveValue("");
  await expect(page.getByTestId("queue-total")).toHaveText("· 61 need a person · filtered");
  await page.goForward();
  await expect(page.getByLabel("Effect class", { exact: true })).toHaveValue("destructive");

  await page.getByRole("button", { name: "Clear filters" }).first().click();
  await expect(page).toHaveURL(`${base}/`);
  await page.getByLabel("Runtime", { exact: true }).selectOption(live);
  await page.getByLabel("Age", { exact: true }).selectOption("15m");
  await page.getByRole("button", { name: "Save this view…" }).click();
  await page.getByRole("dialog").getByLabel("Name").fill("Live, waiting");
  await page.getByRole("dialog").getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("saved-view")).toHaveText(["Live, waiting"]);
  await page.getByRole("button", { name: "Needs a person" }).click();
  await expect(page).toHaveURL(`${base}/`);
  await page.getByTestId("saved-view").click();
  await expect(page).toHaveURL(`${base}/?runtime=${live}&age=15m`);
  await page.getByRole("button", { name: "Delete the view Live, waiting" }).click();
  await expect(page.getByTestId("saved-view")).toHaveCount(0);
});

test("a viewer reads the queue but is offered no action", async ({ page }) => {
  await signIn(page, base, viewer, password);
  await page.goto(`${base}/?runtime=${live}`);
  await expect(rows(page).first()).toBeVisible();
  await page.waitForLoadState("networkidle").catch(() => undefined);
  await expect(page.getByRole("checkbox")).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Actions for / })).toHaveCount(0);
  await expect(page.getByRole("region", { name: "Selection" })).toHaveCount(0);
  await page.keyboard.press("j");
  await page.keyboard.press("v");
  await expect(page.getByRole("dialog")).toHaveCount(0);
});

test("the whole row opens its invocation; the row's Actions menu is a readable menu that acts", async ({
  page,
  request,
}) => {
  const id = `rowclick-${run}`;
  await ingest(request, live, [{ id, tool: "charge_card", cls: "money", ageS: 30 }]);
  await signIn(page, base, op, password);
  await page.goto(`${base}/?runtime=${live}`);
  // A click anywhere on the row that is not one of its controls: here, the runtime's cell.
  await row(page, id).getByRole("cell").filter({ hasText: live }).click();
  await expect(page).toHaveURL(`${base}/invocations/${id}?runtime=${live}`);
  await page.goBack();
  // The checkbox selects without opening.
  await row(page, id).getByRole("checkbox").click();
  await expect(page).toHaveURL(`${base}/?runtime=${live}`);
  await expect(page.getByTestId("selection-count")).toHaveText("1 selected");
  await page.keyboard.press("Escape");

  await row(page, id)
    .getByRole("button", { name: `Actions for charge_card ${id}` })
    .click();
  const menu = page.getByRole("menu");
  await expect(menu).toBeVisible();
  const claim = menu.getByRole("menuitem", { name: /^Claim/ });
  await expect(claim).toContainText("c");
  // Readable: the page's body size, not a squeezed control.
  expect(await claim.evaluate((el) => parseFloat(getComputedStyle(el).fontSize))).toBeGreaterThanOrEqual(14);
  await page.screenshot({ path: docScreenshot("queue-row-menu.png") });
  // The queue's own keys wait while the menu is open; arrow keys move in it.
  await page.keyboard.press("j");
  await expect(page).toHaveURL(`${base}/?runtime=${live}`);
  await page.keyboard.press("Escape");
  // On a wide screen the table lines up with the header: the same left and right edges.
  await page.setViewportSize({ width: 2400, height: 900 });
  const brand = (await page.getByRole("link", { name: "Settle", exact: true }).boundingBox())!;
  const signOut = (await page.getByRole("button", { name: "Sign out" }).boundingBox())!;
  const table = (await page.getByRole("table", { name: "Queue" }).boundingBox())!;
  expect(Math.abs(table.x - brand.x)).toBeLessThanOrEqual(2);
  expect(Math.abs(table.x + table.width - (signOut.x + signOut.width))).toBeLessThanOrEqual(2);
  await page.screenshot({ path: docScreenshot("queue-wide.png") });
  await page.setViewportSize({ width: 1400, height: 900 });
  await row(page, id)
    .getByRole("button", { name: `Actions for charge_card ${id}` })
    .click();
  await claim.click();
  // The menu opens the same confirming dialog as the key does.
  await page
    .getByRole("dialog")
    .getByRole("button", { name: /^Claim/ })
    .click();
  await expect(row(page, id)).toContainText("you");
});

test("at 1440 px every row's Actions button is whole on screen, with long ids, messages and a summary", async ({
  page,
  request,
}) => {
  const wide = `queue-wide-${run}`;
  keys[wide] = settleCli(state.databaseUrl, ["keys", "create", wide]);
  const long = `mcp:create_order:${"9f".repeat(32)}:${run}`;
  const records = [long, `short-${run}`].map((id) => ({
    event_id: `${id}-o1`,
    task_id: `task-${id}`,
    invocation_id: id,
    attempt: 1,
    tool: "create_order_for_the_customer_account",
    effect_class: "money",
    idempotency_key: `key-${id}`,
    arguments: { customer: "cus_123456789", cart: "cart-long-123456789", amount: 123456, currency: "EUR" },
    at: new Date(Date.now() - 60_000).toISOString(),
    envelope: { ...unknownEnvelope, user_message: "We are checking whether this went through. ".repeat(4) },
  }));
  const res = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${keys[wide]}` },
    data: { records },
  });
  expect((await res.json()).rejected).toBe(0);
  await signIn(page, base, op, password);
  await page.goto(`${base}/?runtime=${wide}`);
  await expect(rows(page)).toHaveCount(2);
  // 1440 px, and 1400: the same screen less a browser's scroll bar and window edges.
  for (const width of [1440, 1400]) {
    await page.setViewportSize({ width, height: 900 });
    const section = (await page.getByRole("region", { name: "Invocations" }).boundingBox())!;
    for (const button of await page.getByRole("button", { name: /^Actions for / }).all()) {
      const box = (await button.boundingBox())!;
      expect(box.x + box.width, `Actions at ${width} px`).toBeLessThanOrEqual(section.x + section.width);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  }
  await page.setViewportSize({ width: 1400, height: 900 });
});

test("screenshot: the queue at realistic data", async ({ page }) => {
  test.setTimeout(240_000);
  // On the console's own runtime, where the other specs look for simulated data too.
  // simulate exits 1 when one of its own checks fails; the data is what matters here.
  try {
    settleCli(state.databaseUrl, ["simulate", "--url", base, "--key", state.key, "--tasks", "200", "--seed", "11"]);
  } catch (error) {
    console.log(String(error).slice(0, 500));
  }
  await signIn(page, base, op, password);
  await page.goto(`${base}/?runtime=billing-agent`);
  await expect(rows(page).first()).toBeVisible();
  await page.screenshot({ path: `${OUT_DIR}/screenshots/queue.png` });
  await page.goto(`${base}/`);
  await expect(rows(page).first()).toBeVisible();
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  await page.keyboard.press("x");
  await page.keyboard.press("j");
  await page.keyboard.press("x");
  await page.screenshot({ path: `${OUT_DIR}/screenshots/queue-all-runtimes.png`, fullPage: true });
});
