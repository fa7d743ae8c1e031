import { createHmac } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { startSlackReceiver, type SlackReceiver } from "../tests/integration/slack-receiver";
import { docScreenshot } from "./screenshots";
import { readState } from "./server";
import { signIn } from "./sign-in";

// Admin → Slack app and Account → Slack on the console server, with a stand-in for Slack's Web API in this
// process (the server allows private addresses): before the app is set up a person is told what an admin
// must do; the admin saves the secrets, which are never shown again, and reads the interactivity URL; a
// person links their Slack user with the code the bot posted (read from the stand-in); a wrong code ends
// the attempt; the admin sees the link and removes it.

const state = readState().console;
const base = state.baseURL;
const SIGNING_SECRET = "e2e-signing-secret-0123456789abcdef";
const BOT_TOKEN = "xoxb-e2e-1-2-bottokenvalue";
const SLACK_USER = "U0E2ELINK";

let slack: SlackReceiver;
test.beforeAll(async () => {
  slack = await startSlackReceiver();
});
test.afterAll(async () => {
  await slack?.close();
});

test.describe.configure({ mode: "serial" });

/** The code in the newest direct message the bot posted to `user`. */
function lastCodeTo(user: string): string {
  const messages = slack.to("/api/chat.postMessage").filter((c) => c.body.channel === user);
  const text = String(messages.at(-1)?.body.text ?? "");
  const code = /\b(\d{8})\b/.exec(text)?.[1];
  if (!code) throw new Error(`no code posted to ${user}: ${text}`);
  return code;
}

async function openAccountSlack(page: Page) {
  await page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: "Slack" }).click();
  await expect(page.getByRole("heading", { name: "Slack", level: 1 })).toBeVisible();
}

test("before the app is set up, Account → Slack says what an admin must do", async ({ page }) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/");
  await openAccountSlack(page);
  const empty = page.getByTestId("slack-not-configured");
  await expect(empty).toContainText("The Slack app is not set up yet");
  await expect(empty).toContainText("signing secret and bot token under Admin → Slack app");
  await expect(empty.getByRole("link", { name: "Set up the Slack app" })).toBeVisible();
  await page.screenshot({ path: docScreenshot("slack-account-not-set-up.png") });
});

test("an admin saves the app's secrets, which are never shown again, and reads the interactivity URL", async ({
  page,
}) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Slack app" }).click();
  await expect(page.getByRole("heading", { name: "Slack app", level: 1 })).toBeVisible();
  await expect(page.getByTestId("signing-secret-state")).toHaveText("○Not set");
  await expect(page.getByTestId("bot-token-state")).toHaveText("○Not set");
  await expect(page.getByTestId("slack-interactivity-url")).toHaveText(
    `${base}/api/v1/integrations/slack/interactions`,
  );
  await expect(page.getByTestId("slack-command-url")).toHaveText(`${base}/api/v1/integrations/slack/commands`);
  await expect(page.getByTestId("slack-manifest")).toContainText(
    `request_url: ${base}/api/v1/integrations/slack/interactions`,
  );
  await expect(page.getByTestId("slack-manifest")).toContainText(`url: ${base}/api/v1/integrations/slack/commands`);
  await expect(page.getByTestId("slack-links-empty")).toBeVisible();
  // Money and destructive approvals stay in the console by default.
  const money = page.locator('[data-testid="slack-policy-row"][data-class="money"]');
  await expect(money.getByRole("checkbox", { name: "Approve from Slack for money calls" })).not.toBeChecked();
  await expect(page.getByRole("checkbox", { name: "Approve from Slack for send calls" })).toBeChecked();

  const form = page.getByTestId("slack-credentials");
  await form.getByLabel("Signing secret").fill(SIGNING_SECRET);
  await form.getByLabel("Bot token").fill(BOT_TOKEN);
  await form.getByLabel("Web API address (optional)").fill(slack.url("/api"));
  await form.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status").first()).toContainText("Replaced the signing secret and the bot token");
  await expect(page.getByTestId("signing-secret-state")).toContainText("Set — changed");
  await expect(page.getByTestId("bot-token-state")).toContainText("Set — changed");
  await expect(form.getByLabel("Signing secret")).toHaveValue("");
  await expect(form.getByLabel("Bot token")).toHaveValue("");
  await expect(page.getByTestId("slack-configured")).toContainText("Set up");

  // Read again from the server: the secrets are nowhere on the page, the address is kept.
  await page.reload();
  await expect(page.getByTestId("bot-token-state")).toContainText("Set — changed");
  await expect(form.getByLabel("Web API address (optional)")).toHaveValue(slack.url("/api"));
  const html = await page.content();
  expect(html).not.toContain(SIGNING_SECRET);
  expect(html).not.toContain(BOT_TOKEN);
  await page.screenshot({ path: docScreenshot("slack-admin.png"), fullPage: true });

  // A policy change: approving money calls from Slack, saved and read back.
  await money.getByRole("checkbox", { name: "Approve from Slack for money calls" }).check();
  await page.getByRole("button", { name: "Save what Slack may do" }).click();
  await expect(page.getByRole("status").first()).toContainText("Saved what Slack may do");
  await page.reload();
  await expect(money.getByRole("checkbox", { name: "Approve from Slack for money calls" })).toBeChecked();
  await money.getByRole("checkbox", { name: "Approve from Slack for money calls" }).uncheck();
  await page.getByRole("button", { name: "Save what Slack may do" }).click();
  await expect(page.getByRole("status").first()).toContainText("Saved what Slack may do");
});

test("a person links their Slack user with the code the bot posted; a wrong code ends the attempt", async ({
  page,
}) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/");
  await openAccountSlack(page);
  await expect(page.getByTestId("my-slack-links-empty")).toBeVisible();

  // A wrong code: refused, and that attempt is over.
  await page.getByLabel("Your Slack member id").fill(SLACK_USER);
  await page.getByRole("button", { name: "Send me a code in Slack" }).click();
  await expect(page.getByTestId("slack-code-step")).toContainText(SLACK_USER);
  const first = lastCodeTo(SLACK_USER);
  const wrong = first === "00000000" ? "11111111" : "00000000";
  await page.getByLabel("Code from Slack").fill(wrong);
  await page.getByRole("button", { name: "Link my Slack user" }).click();
  await expect(page.getByTestId("slack-code-step").getByRole("alert")).toContainText("wrong or expired");
  await expect(page.getByLabel("Code from Slack")).toBeDisabled();
  await page.getByRole("button", { name: "Ask for a new code" }).click();

  // The right code, from a new message.
  const sentBefore = slack.to("/api/chat.postMessage").length;
  await page.getByLabel("Your Slack member id").fill(SLACK_USER);
  await page.getByRole("button", { name: "Send me a code in Slack" }).click();
  await expect(page.getByTestId("slack-code-step")).toBeVisible();
  expect(slack.to("/api/chat.postMessage").length).toBe(sentBefore + 1);
  const posted = slack.to("/api/chat.postMessage").at(-1)!;
  expect(posted.authorization).toBe(`Bearer ${BOT_TOKEN}`);
  await page.getByLabel("Code from Slack").fill(lastCodeTo(SLACK_USER));
  await page.screenshot({ path: docScreenshot("slack-account-code.png") });
  await page.getByRole("button", { name: "Link my Slack user" }).click();
  await expect(page.getByRole("status").first()).toContainText(`${SLACK_USER} is linked to you`);
  await expect(page.getByTestId("my-slack-link")).toContainText(SLACK_USER);
  await page.screenshot({ path: docScreenshot("slack-account-linked.png") });

  // The admin's table shows it; removing it asks first.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Slack app" }).click();
  const row = page.locator(`[data-testid="slack-link-row"][data-slack-user="${SLACK_USER}"]`);
  await expect(row).toContainText(state.adminEmail);
  await row.getByRole("button", { name: `Remove the link of ${SLACK_USER}` }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove link" }).click();
  await expect(page.getByRole("status").first()).toContainText(`${SLACK_USER} is no longer linked`);
  await expect(row).toHaveCount(0);
});

/** What Slack sends for a slash command: form-encoded, signed with the app's signing secret. */
function slashCommand(userId: string, text: string) {
  const body = new URLSearchParams({ command: "/settle", text, user_id: userId, team_id: "T0E2E" }).toString();
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac("sha256", SIGNING_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`;
  return {
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": ts,
      "x-slack-signature": signature,
    },
    data: body,
  };
}

test("a person links from Slack by typing the command the page shows", async ({ page, request }) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/account/slack");
  const step = page.getByTestId("slack-command-step");
  await step.getByRole("button", { name: "Show me a code" }).click();
  const command = (await page.getByTestId("slack-command").textContent()) ?? "";
  expect(command).toMatch(/^\/settle link [0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/);
  await page.screenshot({ path: docScreenshot("slack-account-command.png") });
  const code = command.replace("/settle link ", "");

  // Unsigned: refused, nothing linked. Then Slack's own, signed request.
  const unsigned = await request.post(`${base}/api/v1/integrations/slack/commands`, {
    headers: { "content-type": "application/x-www-form-urlencoded" },
    data: `command=%2Fsettle&text=link+${code}&user_id=U0E2ESLASH`,
  });
  expect(unsigned.status()).toBe(401);
  const answer = await request.post(
    `${base}/api/v1/integrations/slack/commands`,
    slashCommand("U0E2ESLASH", `link ${code}`),
  );
  expect(answer.status()).toBe(200);
  expect(await answer.json()).toMatchObject({
    response_type: "ephemeral",
    text: expect.stringContaining(`act as ${state.adminEmail}`),
  });
  // The page was waiting for it.
  await expect(page.getByRole("status").first()).toContainText("U0E2ESLASH is linked to you from Slack", {
    timeout: 10_000,
  });
  await expect(page.getByTestId("my-slack-link")).toContainText("U0E2ESLASH");
  const again = await request.post(
    `${base}/api/v1/integrations/slack/commands`,
    slashCommand("U0E2EOTHER", `link ${code}`),
  );
  expect((await again.json()).text).toContain("wrong, used or expired");

  // A person removes their own link from the same page; it asks first.
  const mine = page.getByTestId("my-slack-link").filter({ hasText: "U0E2ESLASH" });
  await mine.getByRole("button", { name: "Remove your link to U0E2ESLASH" }).click();
  await expect(page.getByRole("dialog")).toContainText("change nothing");
  await page.getByRole("dialog").getByRole("button", { name: "Remove link" }).click();
  await expect(page.getByRole("status").first()).toContainText("U0E2ESLASH is no longer linked to you");
  await expect(mine).toHaveCount(0);
});

test("an admin links a Slack user for someone", async ({ page }) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/integrations/slack");
  await page.getByRole("button", { name: "Link a Slack user" }).click();
  const dialog = page.getByRole("dialog", { name: "Link a Slack user" });
  await dialog.getByLabel("Settle person's email").fill("nobody-here@example.com");
  await dialog.getByLabel("Slack user id").fill("U0E2EADMIN");
  await dialog.getByRole("button", { name: "Link" }).click();
  await expect(dialog.getByRole("alert")).toContainText("No person nobody-here@example.com");
  await dialog.getByLabel("Settle person's email").fill(state.adminEmail);
  await dialog.getByRole("button", { name: "Link" }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByRole("status").first()).toContainText(`U0E2EADMIN now acts as ${state.adminEmail}`);
  await expect(page.locator('[data-testid="slack-link-row"][data-slack-user="U0E2EADMIN"]')).toBeVisible();
});
