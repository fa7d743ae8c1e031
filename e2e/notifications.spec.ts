import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { startReceiver, type Receiver } from "../tests/integration/webhook-receiver";
import { docScreenshot } from "./screenshots";
import { readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// An admin adds a Slack-style channel in Admin → Notifications for one runtime's money calls; three calls of
// that runtime go unknown; the console server's own job sends one signed Block Kit message naming them to a
// receiver in this process; the channel's message log shows it delivered.

const state = readState().console;
const base = state.baseURL;

let receiver: Receiver;
test.beforeAll(async () => {
  receiver = await startReceiver();
});
test.afterAll(async () => {
  await receiver?.close();
});

test("an admin adds a channel; three unknown money calls are one message with links; the log shows it", async ({
  page,
  request,
}) => {
  test.setTimeout(90_000);
  const runtime = `payments-bot-${randomBytes(3).toString("hex")}`;
  const key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/notifications");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Notifications" }).click();
  await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();

  await page.getByRole("button", { name: "Add channel" }).click();
  const form = page.getByRole("dialog", { name: "Add a notification channel" });
  // No SMTP server is configured on this server: email is offered with what it needs.
  await expect(form.getByRole("radio", { name: "Email" })).toBeDisabled();
  await expect(form).toContainText("set SETTLE_SMTP_URL");
  await form.getByLabel("Incoming webhook URL").fill(receiver.url(`/${runtime}`));
  await form.getByRole("group", { name: "Runtimes" }).getByLabel(runtime).check();
  await form.getByRole("group", { name: "Effect classes" }).getByLabel("money").check();
  await form.getByLabel("Digest window (seconds)").fill("0");
  await page.screenshot({ path: docScreenshot("notifications-add.png") });
  await form.getByRole("button", { name: "Add channel" }).click();
  const shown = page.getByRole("dialog", { name: "Channel added" });
  const secret = await shown.getByLabel("Signing secret").inputValue();
  expect(secret).toMatch(/^whsec_/);
  receiver.secrets.set(`/${runtime}`, secret);
  await shown.getByRole("button", { name: "I have copied it" }).click();

  const customers = ["cus_ada", "cus_bo", "cus_cy"];
  const sent = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${key}` },
    data: {
      records: customers.map((customer, i) => ({
        event_id: `${runtime}-${i}-o`,
        task_id: `task-${runtime}`,
        invocation_id: `${runtime}-${i}`,
        tool: "create_refund",
        effect_class: "money",
        idempotency_key: `rf-${runtime}-${i}`,
        arguments: { amount: 1200 + i * 100, currency: "EUR", customer },
        at: new Date(Date.now() - 1000 * (i + 1)).toISOString(),
        envelope: { title: "Gateway Timeout", status: 504 },
      })),
    },
  });
  expect((await sent.json()).accepted).toBe(3);

  await expect
    .poll(() => receiver.received.filter((r) => r.path === `/${runtime}`).length, { timeout: 30_000 })
    .toBe(1);
  const message = receiver.received.find((r) => r.path === `/${runtime}`)!;
  expect(message.verified).toBe(true);
  const body = JSON.parse(message.body) as { blocks: Array<{ type: string; text?: { text: string } }> };
  expect(body.blocks[0]!.text!.text).toBe("3 calls need a person: a new unknown or stalled call");
  const sections = body.blocks.filter((b) => b.type === "section").map((b) => b.text!.text);
  expect(sections).toHaveLength(3);
  expect(sections.join("\n")).toContain(
    `/invocations/${runtime}-0?runtime=${runtime}|amount 1200 · currency EUR · customer cus_ada>`,
  );

  const row = page.getByTestId("channel-row").filter({ hasText: receiver.url(`/${runtime}`) });
  await expect(row).toContainText("1 sent", { timeout: 15_000 });
  await expect(row).toContainText(runtime);
  await page.screenshot({ path: docScreenshot("notifications-admin.png"), fullPage: true });
  await row.getByRole("link", { name: /Message log/ }).click();
  const delivered = page.getByTestId("delivery-row").first();
  await expect(delivered).toContainText("notification.digest");
  await expect(delivered).toContainText("Delivered");
  await delivered.getByRole("button", { name: /Details/ }).click();
  // The digest as queued: the calls it names, with their summaries.
  await expect(page.getByText(/"count": 3/)).toBeVisible();
  await expect(page.getByText(/customer cus_ada/).first()).toBeVisible();
  await page.screenshot({ path: docScreenshot("notifications-log.png"), fullPage: true });
});
