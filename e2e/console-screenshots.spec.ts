import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { startReceiver, type Receiver } from "../tests/integration/webhook-receiver";
import { seedConsole } from "./screenshot-data";
import { OUT_DIR, readState } from "./server";
import { signIn } from "./sign-in";

// Screenshots of every queue, admin and account screen (and the audit trail, task and invocation pages around
// them) at realistic data, with their dialogs open, to look at and to compare before and after a change to the
// console: `SETTLE_SCREENSHOTS=1 [SETTLE_SCREENSHOTS_DIR=dir] npx playwright test e2e/console-screenshots.spec.ts`.
// Off by default: it plays 200 simulated tasks into the shared console server.

const state = readState().console;
const base = state.baseURL;
const dir = process.env.SETTLE_SCREENSHOTS_DIR || path.join(OUT_DIR, "screenshots");

test.skip(!process.env.SETTLE_SCREENSHOTS, "set SETTLE_SCREENSHOTS=1 to take the screenshots");
test.setTimeout(1_500_000);

let receiver: Receiver;
test.beforeAll(async () => {
  receiver = await startReceiver();
});
test.afterAll(async () => {
  await receiver?.close();
});

/** Waits for the fonts and for animations (a dialog's) to end, then takes the page. */
async function shot(page: Page, name: string, fullPage = true) {
  await page.evaluate(() => document.fonts.ready);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage });
}

async function closeDialog(page: Page) {
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
}

async function queueScreens(page: Page, open: { invocation_id: string; runtime: string }) {
  await page.goto(`${base}/`);
  await expect(page.getByTestId("invocation-row").first()).toBeVisible();
  await shot(page, "queue");
  const rows = page.getByTestId("invocation-row");
  await rows.nth(0).getByRole("checkbox").click();
  await rows.nth(1).getByRole("checkbox").click();
  await shot(page, "queue-selected", false);
  await page.getByLabel("Selection").getByRole("button", { name: "Escalate" }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await shot(page, "queue-bulk-dialog", false);
  await closeDialog(page);
  await page.keyboard.press("Escape");
  await rows
    .nth(2)
    .getByRole("button", { name: /^Actions for/ })
    .click();
  await expect(page.getByRole("menu")).toBeVisible();
  await shot(page, "queue-row-menu", false);
  await page.getByRole("menuitem").first().click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await shot(page, "queue-action-dialog", false);
  await closeDialog(page);
  await page.getByRole("button", { name: /Keyboard/ }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await shot(page, "queue-keyboard-help", false);
  await closeDialog(page);
  await page.goto(`${base}/?q=no-such-call-anywhere`);
  await expect(page.getByTestId("empty-no-match")).toBeVisible();
  await shot(page, "queue-no-match", false);
  await page.goto(`${base}/?status=all`);
  await expect(rows.first()).toBeVisible();
  await shot(page, "queue-all", false);
  await page.getByRole("button", { name: /Save this view/ }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await shot(page, "queue-save-view", false);
  await closeDialog(page);

  await page.goto(`${base}/invocations/${encodeURIComponent(open.invocation_id)}?runtime=${open.runtime}`);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await shot(page, "invocation");
  await page
    .getByRole("link", { name: /^Task / })
    .first()
    .click();
  await expect(page.getByRole("heading", { name: "Timeline" })).toBeVisible();
  await shot(page, "task");
}

async function adminScreens(page: Page) {
  await page.goto(`${base}/admin/users`);
  await expect(page.getByTestId("user-row").first()).toBeVisible();
  await shot(page, "admin-users");
  await page.getByRole("button", { name: "Add person" }).click();
  await page.getByRole("dialog").getByLabel("Email").fill("dee.novak@acme.example");
  await shot(page, "admin-users-add", false);
  await page.getByRole("dialog").getByRole("button", { name: "Add person" }).click();
  await expect(page.getByRole("dialog", { name: /Password for/ })).toBeVisible();
  await shot(page, "admin-users-password", false);
  await page.getByRole("button", { name: "I have copied it" }).click();
  const bo = page.getByTestId("user-row").filter({ hasText: "bo.chen" });
  await bo.getByRole("button", { name: /Change role/ }).click();
  await shot(page, "admin-users-role", false);
  await closeDialog(page);
  await bo.getByRole("button", { name: /Reset the password/ }).click();
  await page.getByRole("dialog").getByText("A one-time link").click();
  await shot(page, "admin-users-reset", false);
  await closeDialog(page);
  await bo.getByRole("button", { name: /Deactivate/ }).click();
  await shot(page, "admin-users-deactivate", false);
  await closeDialog(page);

  await page.goto(`${base}/admin/keys`);
  await expect(page.getByTestId("key-row").first()).toBeVisible();
  await page
    .getByTestId("key-row")
    .filter({ hasText: "staging" })
    .getByRole("button", { name: /Revoke/ })
    .click();
  await shot(page, "admin-keys-revoke", false);
  await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click();
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await shot(page, "admin-keys");
  await page.getByRole("button", { name: "Create key" }).click();
  await page.getByRole("dialog").getByLabel("Runtime").fill("support-bot");
  await page.getByRole("dialog").getByLabel("Key name").fill("prod-ap-1");
  await shot(page, "admin-keys-create", false);
  await page.getByRole("dialog").getByRole("button", { name: "Create key" }).click();
  await expect(page.getByRole("dialog", { name: /Key for runtime/ })).toBeVisible();
  await shot(page, "admin-keys-created", false);
  await page.getByRole("button", { name: "I have copied it" }).click();

  await page.goto(`${base}/admin/tool-catalog`);
  await expect(page.getByTestId("catalog-row").first()).toBeVisible();
  await shot(page, "admin-tool-catalog");
  const refund = page.getByTestId("catalog-row").filter({ hasText: "create_refund" });
  await refund.getByRole("button", { name: /Edit the verifier/ }).click();
  await shot(page, "admin-tool-catalog-verifier", false);
  await closeDialog(page);
  await refund.getByRole("button", { name: /Edit the summary/ }).click();
  await shot(page, "admin-tool-catalog-runbook", false);
  await closeDialog(page);
  await refund.getByRole("button", { name: /Remove/ }).click();
  await shot(page, "admin-tool-catalog-remove", false);
  await closeDialog(page);
  await page.getByLabel("Show runtime").selectOption("billing-agent");
  await page.getByLabel(/Check a tool name/).fill("charge_card");
  await shot(page, "admin-tool-catalog-runtime", false);

  await page.goto(`${base}/admin/policies`);
  await expect(page.getByTestId("policy-row").first()).toBeVisible();
  await shot(page, "admin-policies");
  await page.getByRole("button", { name: "Edit the send policy" }).click();
  await shot(page, "admin-policies-edit", false);

  await page.goto(`${base}/admin/retention`);
  await expect(page.getByTestId("retention-row").first()).toBeVisible();
  await shot(page, "admin-retention");
  await page.getByRole("button", { name: "Edit retention for support-bot" }).click();
  await shot(page, "admin-retention-edit", false);

  await page.goto(`${base}/admin/webhooks`);
  await expect(page.getByTestId("webhook-row").first()).toBeVisible();
  await shot(page, "admin-webhooks");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  await shot(page, "admin-webhooks-add", false);
  await closeDialog(page);
  await page.getByTestId("webhook-row").filter({ hasText: "127.0.0.1:9/" }).getByRole("link").click();
  await expect(page.getByTestId("delivery-row").first()).toBeVisible();
  await shot(page, "admin-webhook-endpoint");
  await page
    .getByTestId("delivery-row")
    .first()
    .getByRole("button", { name: /Details/ })
    .click();
  await shot(page, "admin-webhook-endpoint-details", false);
  await page.getByRole("button", { name: "Rotate secret" }).click();
  await shot(page, "admin-webhook-endpoint-rotate", false);
  await closeDialog(page);

  await page.goto(`${base}/admin/notifications`);
  await expect(page.getByTestId("channel-row").first()).toBeVisible();
  await shot(page, "admin-notifications");
  await page.getByRole("button", { name: "Add channel" }).click();
  await shot(page, "admin-notifications-add", false);
  await closeDialog(page);
  await page
    .getByTestId("channel-row")
    .first()
    .getByRole("button", { name: /Delete/ })
    .click();
  await shot(page, "admin-notifications-delete", false);
  await closeDialog(page);
  await page
    .getByTestId("channel-row")
    .first()
    .getByRole("link", { name: /Message log/ })
    .click();
  await expect(page.getByTestId("delivery-row").first()).toBeVisible();
  await shot(page, "admin-notification-channel");
}

async function accountScreens(page: Page) {
  await page.goto(`${base}/account/tokens`);
  await expect(page.getByTestId("token-row").first()).toBeVisible();
  await page.getByLabel("New token name").fill("weekly-report");
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await shot(page, "account-tokens-created", false);
  await page.getByRole("button", { name: "I have copied it" }).click();
  await page
    .getByTestId("token-row")
    .filter({ hasText: "weekly-report" })
    .getByRole("button", { name: /Revoke/ })
    .click();
  await shot(page, "account-tokens-revoke", false);
  await page.getByRole("dialog").getByRole("button", { name: "Revoke token" }).click();
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await shot(page, "account-tokens");
  await page.goto(`${base}/account/password`);
  await shot(page, "account-password");
}

test("every queue, admin and account screen at realistic data", async ({ page, request }) => {
  const open = await seedConsole(request, receiver);
  // The background job delivers webhooks and notifications every second: let the logs fill.
  await expect.poll(() => receiver.received.filter((r) => r.verified).length, { timeout: 60_000 }).toBeGreaterThan(20);

  await signIn(page, base, state.adminEmail, state.adminPassword, "/audit");
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  await shot(page, "audit");
  await page.goto(`${base}/audit?actor=bo.chen&to_status=reconciled`);
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  await shot(page, "audit-filtered", false);

  await queueScreens(page, open);
  await adminScreens(page);
  await accountScreens(page);
});
