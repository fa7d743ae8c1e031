import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// The password forms (Account → Password, and the reset link's page) submitted before their scripts run, as a
// browser with scripts blocked or still loading does (issue 36): a GET form put every password in the URL, the
// history and the server's log. They post nothing, stay where they are, and say what to do.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");

function recordUrls(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (r) => urls.push(r.url()));
  page.on("framenavigated", (f) => urls.push(f.url()));
  return urls;
}

async function submitWithoutScripts(page: Page, fields: Array<[label: string | RegExp, value: string]>) {
  const form = page.locator("form");
  await expect(form).toHaveAttribute("method", "post");
  await expect(form.locator("input[name]")).toHaveCount(0);
  await expect(form.getByRole("button")).toBeDisabled();
  for (const [label, value] of fields) await page.getByLabel(label, { exact: true }).fill(value);
  await page.getByLabel(fields.at(-1)![0], { exact: true }).press("Enter");
  await expect
    .poll(() => page.getByTestId("scripts-missing").evaluate((e) => getComputedStyle(e).opacity), { timeout: 10_000 })
    .toBe("1");
}

test("without scripts, neither password form sends a password anywhere", async ({ browser }) => {
  test.setTimeout(90_000);
  const email = `fay-${run}@example.com`;
  const password = `fay's password ${run}`;
  settleCli(state.databaseUrl, ["users", "create", "--email", email, "--role", "viewer", "--password", password]);
  const signedIn = await browser.newContext();
  await signIn(await signedIn.newPage(), base, email, password);
  const cookies = await signedIn.storageState();
  await signedIn.close();

  const context = await browser.newContext({ javaScriptEnabled: false, storageState: cookies });
  const page = await context.newPage();
  const urls = recordUrls(page);
  const secrets = ["current pw 8f2k", "new pw 1 93jd", "new pw 2 93jd"];

  await page.goto(`${base}/account/password`);
  await submitWithoutScripts(page, [
    ["Current password", secrets[0]!],
    ["New password", secrets[1]!],
    ["New password again", secrets[1]!],
  ]);
  expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe("/account/password");

  await page.goto(`${base}/reset-password?token=not-a-real-token`);
  await submitWithoutScripts(page, [
    ["New password", secrets[2]!],
    ["New password again", secrets[2]!],
  ]);
  expect(page.url()).toBe(`${base}/reset-password?token=not-a-real-token`);

  for (const url of urls)
    for (const secret of secrets) expect(url, url).not.toContain(encodeURIComponent(secret).replace(/%20/g, "+"));
  for (const url of urls) expect(url).not.toMatch(/password=|again=/);
  await context.close();
});
