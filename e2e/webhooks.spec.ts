import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { startReceiver, type Receiver } from "../tests/integration/webhook-receiver";
import { readState, settleCli } from "./server";
import { sendCommittedCall } from "./records";
import { signIn } from "./sign-in";

// An admin adds a webhook endpoint in the console, the console server's own
// background job delivers a signed event to a receiver in this process, the
// first try fails, and Resend in the delivery log gets it through.

const state = readState().console;
const base = state.baseURL;

let receiver: Receiver;
test.beforeAll(async () => {
  receiver = await startReceiver();
});
test.afterAll(async () => {
  await receiver?.close();
});

test("an admin adds an endpoint, sees a failed try in the delivery log, and resends it", async ({ page, request }) => {
  test.setTimeout(60_000);
  const runtime = `wh-agent-${randomBytes(3).toString("hex")}`;
  const key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/webhooks");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByRole("heading", { name: "Webhooks", level: 1 })).toBeVisible();

  await page.getByRole("button", { name: "Add endpoint" }).click();
  const form = page.getByRole("dialog", { name: "Add an endpoint" });
  await form.getByLabel("Runtime").selectOption(runtime);
  await form.getByLabel("URL").fill(receiver.url(`/${runtime}`));
  await form.getByRole("button", { name: "Add endpoint" }).click();
  const shown = page.getByRole("dialog", { name: `Signing secret for ${runtime}` });
  const secret = await shown.getByLabel("Webhook signing secret").inputValue();
  expect(secret).toMatch(/^whsec_/);
  receiver.secrets.set(`/${runtime}`, secret);
  await shown.getByRole("button", { name: "I have copied it" }).click();
  // A signed endpoint is listed: the page says how a receiver checks the signature.
  await expect(page.getByText("How a receiver checks that an event came from Settle")).toBeVisible();

  receiver.failNext(1);
  const id = await sendCommittedCall(request, base, key);

  await page
    .getByRole("row")
    .filter({ hasText: runtime })
    .getByRole("link", { name: /Delivery log/ })
    .click();
  await expect(page.getByRole("heading", { name: `Webhook for ${runtime}` })).toBeVisible();
  const row = page.getByTestId("delivery-row").filter({ hasText: id });
  // The server's job runs every 5 s: the first try gets the receiver's 500.
  await expect(row).toContainText("Pending", { timeout: 15_000 });
  await expect(row).toContainText("500", { timeout: 15_000 });
  await expect(row).toContainText("invocation.settled");

  await row.getByRole("button", { name: /^Resend/ }).click();
  await expect(page.getByRole("status").filter({ hasText: "queued to be sent again" })).toBeVisible();
  await expect(row).toContainText("Delivered", { timeout: 15_000 });
  await expect(row).toContainText(`resent by ${state.adminEmail}`);
  await row.getByRole("button", { name: /^Details/ }).click();
  const attempts = page.getByTestId("attempt-rows").getByRole("row");
  await expect(attempts).toHaveCount(2);
  await expect(attempts.first()).toContainText("204");
  await expect(attempts.last()).toContainText("500");

  const got = receiver.received.filter((r) => r.path === `/${runtime}`);
  expect(got).toHaveLength(2);
  expect(got.every((r) => r.verified && r.eventId === got[0]!.eventId)).toBe(true);
  expect(got[0]!.event).toMatchObject({
    type: "invocation.settled",
    data: { invocation_id: id, decision: "do_not_retry", runtime },
  });
});
