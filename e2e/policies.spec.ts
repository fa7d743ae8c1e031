import { expect, request as playwrightRequest, test } from "@playwright/test";
import { readState } from "./server";
import { signIn } from "./sign-in";

// The policy page on the shared console server. It edits `read` only, with
// timers of weeks (no record of any spec is that old), and puts it back on
// the default afterwards, so the other specs' queues are never escalated or flagged by it.

const state = readState().console;
const base = state.baseURL;

test.afterAll(async () => {
  const admin = await playwrightRequest.newContext({ baseURL: base, extraHTTPHeaders: { origin: base } });
  await admin.post("/api/auth/sign-in/email", { data: { email: state.adminEmail, password: state.adminPassword } });
  await admin.delete("/api/v1/policies/read");
  await admin.dispose();
});

test("an admin edits a policy inline: a validation error is shown at the field, a valid one is saved with who changed it", async ({
  page,
}) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policies" }).click();
  await expect(page.getByRole("heading", { name: "Policies" })).toBeVisible();
  const row = page.locator('[data-testid="policy-row"][data-class="read"]');
  await expect(row).toContainText("uses the default");

  await row.getByRole("button", { name: "Edit the read policy" }).click();
  const overdue = row.getByLabel("Overdue after (read)");
  const escalate = row.getByLabel("Escalates after (read)");
  // Not a duration: refused in the browser, next to the field.
  await overdue.fill("soon");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(overdue).toHaveAttribute("aria-invalid", "true");
  await expect(row).toContainText("Write a duration such as 30m");

  // Overdue after escalation: the server refuses it, and says why at the field.
  await overdue.fill("61d");
  await escalate.fill("60d");
  await row.getByLabel("Approvals needed (read)").fill("2");
  await row.getByLabel("Duplicate window (read)").fill("2h");
  await row.getByRole("button", { name: "Save" }).click();
  await expect(row).toContainText("overdue after must be shorter than escalate after");
  await expect(overdue).toHaveAttribute("aria-invalid", "true");

  await overdue.fill("30d 12h");
  // Enter submits through the form's Save button, which stays disabled until the refused save has settled.
  await expect(row.getByRole("button", { name: "Save" })).toBeEnabled();
  await overdue.press("Enter");
  await expect(page.getByRole("status")).toHaveText("Saved the read policy.");
  await expect(row.getByRole("cell").nth(0)).toHaveText("30d 12h");
  await expect(row.getByRole("cell").nth(1)).toHaveText("60d");
  await expect(row.getByRole("cell").nth(2)).toHaveText("off");
  await expect(row.getByRole("cell").nth(3)).toHaveText("2h");
  await expect(row.getByRole("cell").nth(4)).toHaveText("2");
  await expect(row).toContainText(`changed by ${state.adminEmail}`);
  await expect(page.getByTestId("policy-changes")).toContainText(
    "read: overdue after 30d 12h, escalates after 60d, approval expires after off, duplicate window 2h, approvals needed 2",
  );

  // Saved in the database, not only on the screen.
  await page.reload();
  await expect(row.getByRole("cell").nth(0)).toHaveText("30d 12h");
  await expect(row).toContainText("own policy");
});
