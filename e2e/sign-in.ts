import { expect, type Page } from "@playwright/test";

export async function signIn(page: Page, baseURL: string, email: string, password: string, next = "/") {
  await page.goto(`${baseURL}/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
}
