import type { Locator, Page } from "@playwright/test";

/** Adds an entry through Admin → Tool catalog's form (the page must be open); its row. */
export async function addCatalogEntry(
  page: Page,
  pattern: string,
  effectClass = "money",
  runtime = "billing-agent",
): Promise<Locator> {
  const form = page.getByRole("form", { name: "Add a catalog entry" });
  await form.getByLabel("Runtime").selectOption(runtime);
  await form.getByLabel("Tool name or pattern").fill(pattern);
  await form.getByLabel("Effect class").selectOption(effectClass);
  await form.getByRole("button", { name: "Add entry" }).click();
  return page.getByTestId("catalog-row").filter({ hasText: pattern });
}
