import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { OUT_DIR, readState } from "./server";
import { signIn } from "./sign-in";

// An invocation with more records than its page carries: the page shows the
// latest 200 and says how many there are; earlier ones load on demand, and an
// envelope hint Settle could not use is named on its attempt.

const state = readState().console;
const run = randomBytes(3).toString("hex");

test("a long invocation shows its latest records, loads the earlier ones, and names an ignored hint", async ({
  page,
  request,
}) => {
  const id = `long-${run}`;
  const t0 = Date.now() - 3_600_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const base = { task_id: `task-${id}`, invocation_id: id, tool: "sync_ledger", effect_class: "create" };
  const records = Array.from({ length: 130 }, (_, i) => [
    { ...base, event_id: `${id}-${i}-i`, attempt: i + 1, phase: "intent", at: at(i * 10) },
    {
      ...base,
      event_id: `${id}-${i}-o`,
      attempt: i + 1,
      phase: "outcome",
      at: at(i * 10 + 2),
      // The last one: a 429 whose retry_after no clock can reach.
      envelope:
        i === 129
          ? { type: "about:blank", title: "Too Many Requests", status: 429, retry_after: 1e13 }
          : { outcome: "retryable", effect_applied: "no", retry_after_s: 5 },
    },
  ]).flat();
  const sent = await request.post(`${state.baseURL}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${state.key}` },
    data: { records },
  });
  expect(sent.status()).toBe(207);
  const body = await sent.json();
  expect(body.accepted).toBe(260);
  expect(body.results.at(-1).ignored).toEqual([expect.objectContaining({ field: "retry_after" })]);

  await signIn(page, state.baseURL, state.adminEmail, state.adminPassword);
  await page.goto(`${state.baseURL}/invocations/${id}`);
  await expect(page.getByRole("heading", { name: /Records, as received and as read \(260\)/ })).toBeVisible();
  const earlier = page.getByTestId("earlier-attempts");
  await expect(earlier).toContainText("Showing the latest 200 of 260 records");
  await expect(page.getByTestId("ignored-hints")).toContainText("retry_after");
  await earlier.getByRole("button", { name: "Load earlier records" }).click();
  await expect(earlier).toContainText("Showing the latest 200 and 60 earlier of 260 records");
  await expect(earlier.getByRole("button", { name: "Load earlier records" })).toHaveCount(0);
  await expect(page.locator("section[id^='earlier-']")).toHaveCount(60);
  await page.getByTestId("earlier-attempts").scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${OUT_DIR}/long-invocation.png`, fullPage: false });
});
