import { expect, test } from "@playwright/test";
import { readState } from "./server";
import { signIn } from "./sign-in";

const state = readState().console;

test("the console on PostgreSQL: an admin signs in and sees the queue", async ({ page }) => {
  await signIn(page, state.baseURL, state.adminEmail, state.adminPassword);
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
  await expect(page.getByText(state.adminEmail)).toBeVisible();
});
