import { expect, test } from "@playwright/test";
import { readState } from "./server";
import { signIn } from "./sign-in";

const state = readState().console;

test("the console on PostgreSQL: an admin signs in and sees the queue", async ({ page }) => {
  await signIn(page, state.baseURL, state.adminEmail, state.adminPassword);
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
  await expect(page.getByText(state.adminEmail)).toBeVisible();
});

test("a deep link survives sign-in", async ({ page }) => {
  await page.goto(`${state.baseURL}/audit?actor=admin`);
  await expect(page).toHaveURL(/\/sign-in\?next=%2Faudit%3Factor%3Dadmin$/);
  await page.getByLabel("Email").fill(state.adminEmail);
  await page.getByLabel("Password").fill(state.adminPassword);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/audit\?actor=admin$/);
});
