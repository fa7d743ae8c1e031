import { expect, test } from "@playwright/test";
import { readState } from "./server";
import { signIn } from "./sign-in";

// Admin → Data retention on the shared console server. It sets the default to periods longer than any record of
// any spec is old, so nothing another spec ingests can leave while it runs.

const state = readState().console;
const base = state.baseURL;

test("an admin reads and sets how long settled history is kept; a bad number is refused under the row", async ({
  page,
}, testInfo) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Data retention" }).click();
  await expect(page.getByRole("heading", { name: "Data retention" })).toBeVisible();
  const row = page.locator('[data-testid="retention-row"][data-runtime="*"]');
  await expect(row).toContainText("90 days");
  await expect(row).toContainText("400 days");
  await expect(page.getByTestId("archives-empty")).toContainText("Nothing has left retention yet");

  await row.getByRole("button", { name: "Edit retention for the default" }).click();
  const attempts = row.getByLabel("Attempts kept (the default)");
  const audit = row.getByLabel("Audit trail kept (the default)");
  await attempts.fill("0");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row.getByRole("alert")).toContainText("whole number of days, from 1");

  await attempts.fill("120");
  await audit.fill("5000");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row.getByRole("alert")).toContainText("audit_days is at most 3650 days");

  await audit.fill("500");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toHaveText("Saved the default's retention.");
  await expect(row).toContainText("120 days");
  await expect(row).toContainText(`changed by ${state.adminEmail}`);
  // Every runtime without its own period follows the default.
  const runtimes = page.locator('[data-testid="retention-row"]:not([data-runtime="*"])');
  if ((await runtimes.count()) > 0) await expect(runtimes.first()).toContainText("uses the default");
  await page.screenshot({ path: testInfo.outputPath("retention.png"), fullPage: true });

  await page.reload();
  await expect(row).toContainText("120 days");
  await expect(row).toContainText("500 days");
});
