import { expect, test } from "@playwright/test";
import { OUT_DIR, readState } from "./server";
import { signIn } from "./sign-in";

const state = readState().embedded;

test.describe("first run on the embedded database", () => {
  test("prints a local key with a curl example, and an admin's sign-in", async ({ request, page }) => {
    expect(state.banner).toContain('A runtime ingest key named "local" was created');
    expect(state.banner).toContain("An admin was created");
    await page.goto(state.baseURL);
    await expect(page).toHaveURL(/\/sign-in\?next=%2F$/);
    await page.getByLabel("Email").fill(state.adminEmail);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert")).toBeVisible();
    expect(state.banner).toContain(`curl -sS ${state.baseURL}/api/v1/envelopes`);
    const health = await request.get(`${state.baseURL}/api/health`);
    expect(await health.json()).toEqual({ ok: true, db: "up", database: "pglite" });
  });

  test("an unknown outcome ingested through the API shows in the queue within 2 s, as unknown, its text inert", async ({
    page,
    request,
  }) => {
    await signIn(page, state.baseURL, state.adminEmail, state.adminPassword);
    await expect(page.getByRole("heading", { name: "Nothing has been reported yet." })).toBeVisible();
    await expect(page.getByText("npm run -s settle -- keys create <runtime>")).toBeVisible();
    await expect(page.getByText(`curl -sS ${state.baseURL}/api/v1/envelopes`, { exact: false })).toBeVisible();

    const hostile = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
    const res = await request.post(`${state.baseURL}/api/v1/envelopes`, {
      headers: { authorization: `Bearer ${state.key}` },
      data: {
        records: [
          {
            event_id: "e2e-1",
            task_id: "ord-7741",
            invocation_id: "inv-7f3",
            attempt: 1,
            tool: "create_invoice",
            effect_class: "create",
            phase: "intent",
            at: new Date(Date.now() - 9_000).toISOString(),
          },
          {
            event_id: "e2e-2",
            task_id: "ord-7741",
            invocation_id: "inv-7f3",
            attempt: 1,
            tool: "create_invoice",
            effect_class: "create",
            at: new Date(Date.now() - 1_000).toISOString(),
            envelope: {
              ok: false,
              code: "OUTCOME_UNKNOWN",
              category: "dependency",
              commit_state: "unknown",
              retry: { directive: "never", max_attempts_remaining: 0 },
              next_action: "verify_operation",
              user_message: hostile,
            },
          },
          {
            event_id: "e2e-3",
            task_id: "ord-7742",
            invocation_id: "inv-ok",
            tool: "get_price",
            effect_class: "read",
            envelope: { outcome: "ok", effect_applied: "yes" },
          },
        ],
      },
    });
    expect(res.status()).toBe(207);

    // Within 2 s of the answer, without a reload.
    const row = page.getByTestId("invocation-row").filter({ hasText: "inv-7f3" });
    await expect(row).toBeVisible({ timeout: 2_000 });
    await expect(row.getByText("Outcome unknown")).toBeVisible();
    await expect(row.getByTestId("commit-state")).toHaveText(/^\W*unknown$/);
    await expect(row.getByText("Verify it happened")).toBeVisible();
    await expect(row.getByText(hostile, { exact: true })).toBeVisible();
    // A success needs nobody: it is not in the queue, only under "Everything".
    await expect(page.getByTestId("invocation-row").filter({ hasText: "inv-ok" })).toHaveCount(0);
    await expect(page.getByTestId("queue-total")).toHaveText("· 1 need a person");
    await page.screenshot({ path: `${OUT_DIR}/screenshots/queue-first-run.png`, fullPage: true });

    await page.getByRole("button", { name: "Everything" }).click();
    await expect(page).toHaveURL(/\?status=all$/);
    await expect(page.getByTestId("invocation-row").filter({ hasText: "inv-ok" }).getByText("Succeeded")).toBeVisible();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await expect(page.locator("img[src=x]")).toHaveCount(0);
  });
});
