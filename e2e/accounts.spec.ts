import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { docScreenshot } from "./screenshots";
import { readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// Accounts in the console: an admin resets a person's password to a temporary one, which that person must
// change before anything else; a one-time link lets another choose a new one; everyone changes their own.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");

test("a temporary password must be changed first; a one-time link sets a new one once", async ({ browser }) => {
  test.setTimeout(90_000);
  const dee = `dee-${run}@example.com`;
  const eli = `eli-${run}@example.com`;
  for (const email of [dee, eli])
    settleCli(state.databaseUrl, [
      "users",
      "create",
      "--email",
      email,
      "--role",
      "operator",
      "--password",
      "first password 1",
    ]);

  const adminPage = await (await browser.newContext()).newPage();
  await signIn(adminPage, base, state.adminEmail, state.adminPassword, "/admin/users");
  await adminPage.goto(`${base}/admin/users`);
  await adminPage.getByRole("button", { name: `Reset the password of ${dee}` }).click();
  const dialog = adminPage.getByRole("dialog", { name: `Reset the password of ${dee}?` });
  // Nothing is chosen for the admin.
  await expect(dialog.getByRole("button", { name: "Choose one" })).toBeDisabled();
  await dialog.getByLabel(/A temporary password/).check();
  await adminPage.screenshot({ path: docScreenshot("password-reset-dialog.png") });
  await dialog.getByRole("button", { name: "Set a temporary password" }).click();
  const shown = adminPage.getByRole("dialog", { name: `Password reset for ${dee}` });
  const temporary = await shown.getByLabel("Temporary password").inputValue();
  await shown.getByRole("button", { name: "I have copied it" }).click();
  await expect(adminPage.getByRole("status").filter({ hasText: "must choose a new password" })).toBeVisible();

  const deePage = await (await browser.newContext()).newPage();
  await signIn(deePage, base, dee, temporary);
  // Any page sends Dee to choose a password first.
  await deePage.goto(`${base}/audit`);
  await expect(deePage).toHaveURL(`${base}/account/password?required=1`);
  await expect(deePage.getByRole("alert").filter({ hasText: "reset your password to a temporary one" })).toBeVisible();
  await deePage.screenshot({ path: docScreenshot("password-required.png") });
  await deePage.getByLabel("Temporary password").fill(temporary);
  await deePage.getByLabel("New password", { exact: true }).fill("dee's own password");
  await deePage.getByLabel("New password again").fill("dee's own passw0rd");
  await deePage.getByRole("button", { name: "Change password" }).click();
  await expect(deePage.getByRole("alert").filter({ hasText: "differ" })).toBeVisible();
  await deePage.getByLabel("New password again").fill("dee's own password");
  await deePage.getByRole("button", { name: "Change password" }).click();
  await expect(deePage).toHaveURL(`${base}/`);
  await deePage.goto(`${base}/audit`);
  await expect(deePage).toHaveURL(`${base}/audit`);

  await adminPage.getByRole("button", { name: `Reset the password of ${eli}` }).click();
  const linkDialog = adminPage.getByRole("dialog", { name: `Reset the password of ${eli}?` });
  await linkDialog.getByLabel(/A one-time link/).check();
  await linkDialog.getByRole("button", { name: "Make a reset link" }).click();
  const linkShown = adminPage.getByRole("dialog", { name: `Password reset for ${eli}` });
  const link = await linkShown.getByLabel("One-time reset link").inputValue();
  expect(link).toContain("/reset-password?token=");

  const eliPage = await (await browser.newContext()).newPage();
  await eliPage.goto(`${base}${new URL(link).pathname}${new URL(link).search}`);
  await eliPage.getByLabel("New password", { exact: true }).fill("eli chose this");
  await eliPage.getByLabel("New password again").fill("eli chose this");
  await eliPage.screenshot({ path: docScreenshot("password-reset-link.png") });
  await eliPage.getByRole("button", { name: "Set my password" }).click();
  await expect(eliPage.getByRole("status")).toContainText(`Your new password is set for ${eli}`);
  await eliPage.reload();
  await eliPage.getByLabel("New password", { exact: true }).fill("a second try now");
  await eliPage.getByLabel("New password again").fill("a second try now");
  await eliPage.getByRole("button", { name: "Set my password" }).click();
  await expect(eliPage.getByRole("alert").filter({ hasText: /used already|not valid/ })).toBeVisible();
  await signIn(eliPage, base, eli, "eli chose this");

  // Changing one's own password from Account → Password.
  await eliPage.getByRole("navigation", { name: "Account" }).getByRole("link", { name: "Password" }).click();
  await eliPage.getByLabel("Current password").fill("eli chose this");
  await eliPage.getByLabel("New password", { exact: true }).fill("eli changed it again");
  await eliPage.getByLabel("New password again").fill("eli changed it again");
  await eliPage.getByRole("button", { name: "Change password" }).click();
  await expect(eliPage.getByRole("status").filter({ hasText: "Your password is changed" })).toBeVisible();
  await eliPage.screenshot({ path: docScreenshot("password-change.png") });
});
