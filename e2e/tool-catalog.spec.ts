import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { readState } from "./server";
import { signIn } from "./sign-in";

// Admin → Tool catalog on the console server (PostgreSQL): an admin gives a
// pattern an effect class, sees it listed, changes it, and the runtime reads
// it from its own GET /api/v1/tool-catalog. Patterns are unique per run.

const state = readState().console;
const base = state.baseURL;

test("an admin adds a catalog entry, sees it listed and checked, changes its class, and the runtime reads it", async ({ page, request }) => {
  const pattern = `refund_${randomBytes(3).toString("hex")}_*`;
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/tool-catalog");
  await expect(page.getByRole("heading", { name: "Tool catalog" })).toBeVisible();

  const form = page.getByRole("form", { name: "Add a catalog entry" });
  await form.getByLabel("Runtime").selectOption("billing-agent");
  await form.getByLabel("Tool name or pattern").fill(pattern);
  await form.getByLabel("Effect class").selectOption("money");
  await form.getByRole("button", { name: "Add entry" }).click();
  await expect(page.getByRole("status").filter({ hasText: `Added ${pattern} → money for billing-agent.` })).toBeVisible();

  const row = page.getByTestId("catalog-row").filter({ hasText: pattern });
  await expect(row).toHaveCount(1);
  await expect(row.getByLabel(`Effect class of ${pattern}`)).toHaveValue("money");

  // The same pattern again is refused, with Settle's reason in place.
  await form.getByLabel("Tool name or pattern").fill(pattern);
  await form.getByRole("button", { name: "Add entry" }).click();
  await expect(form.getByRole("alert")).toContainText("already has");

  // The page checks a tool name against the runtime's catalog with the same rule as ingest.
  await page.getByLabel("Show runtime").selectOption("billing-agent");
  const tool = pattern.replace("*", "full");
  await page.getByLabel("Check a tool name against billing-agent's catalog").fill(tool);
  await expect(page.getByRole("status").filter({ hasText: `${tool} is money.` })).toBeVisible();
  await page.screenshot({ path: "test-results/screenshots/tool-catalog.png", fullPage: true });

  await row.getByLabel(`Effect class of ${pattern}`).selectOption("destructive");
  await expect(page.getByRole("status").filter({ hasText: `${pattern} is now destructive for billing-agent.` })).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("catalog-row").filter({ hasText: pattern }).getByLabel(`Effect class of ${pattern}`)).toHaveValue("destructive");

  const own = await request.get(`${base}/api/v1/tool-catalog`, { headers: { authorization: `Bearer ${state.key}` } });
  expect(own.status()).toBe(200);
  expect((await own.json()).items).toContainEqual({ pattern, effect_class: "destructive" });

  await page.getByTestId("catalog-row").filter({ hasText: pattern }).getByRole("button", { name: `Remove ${pattern} from billing-agent` }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove entry" }).click();
  await expect(page.getByTestId("catalog-row").filter({ hasText: pattern })).toHaveCount(0);
});
