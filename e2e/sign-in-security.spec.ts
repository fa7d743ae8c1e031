import { expect, test } from "@playwright/test";
import { readState } from "./server";

// The sign-in findings, tried again in a browser the way they were found.

test("next= that leaves the site (/%5Cevil.example, /%09/evil.example) lands on the console's own front page", async ({
  page,
}) => {
  const { baseURL, adminEmail, adminPassword } = readState().console;
  for (const next of ["/%5Cevil.example", "/%09/evil.example"]) {
    await page.context().clearCookies();
    await page.goto(`${baseURL}/sign-in?next=${next}`);
    await page.getByLabel("Email").fill(adminEmail);
    await page.getByLabel("Password").fill(adminPassword);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
    expect(new URL(page.url()).origin).toBe(baseURL);
    expect(new URL(page.url()).pathname).toBe("/");
  }
});

test("opened under another host than SETTLE_PUBLIC_URL, sign-in says which address to open", async ({ page }) => {
  const { baseURL, adminEmail, adminPassword } = readState().console;
  const other = baseURL.replace("127.0.0.1", "localhost");
  await page.goto(`${other}/sign-in`);
  await expect(page.getByRole("alert").filter({ hasText: "Settle is configured for" })).toContainText(
    `Settle is configured for ${baseURL}`,
  );
  await page.getByLabel("Email").fill(adminEmail);
  await page.getByLabel("Password").fill(adminPassword);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("form").getByRole("alert")).toContainText(
    `Open ${baseURL}/sign-in, or set SETTLE_PUBLIC_URL=${other}`,
  );
});

test("Better Auth's admin endpoints answer 404 to a signed-in admin", async ({ page }) => {
  const { baseURL, adminEmail, adminPassword } = readState().console;
  await page.goto(`${baseURL}/sign-in`);
  await page.getByLabel("Email").fill(adminEmail);
  await page.getByLabel("Password").fill(adminPassword);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  const res = await page.request.post(`${baseURL}/api/auth/admin/impersonate-user`, {
    data: { userId: "x" },
    headers: { origin: baseURL },
  });
  expect(res.status()).toBe(404);
  expect((await res.json()).code).toBe("NOT_FOUND");
});
