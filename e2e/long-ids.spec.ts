import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { OUT_DIR, readState } from "./server";
import { signIn } from "./sign-in";

// The MCP gateway's invocation ids (task id, idempotency key, its own suffix) run past 100 characters: the queue,
// the task page and the invocation page show the head and tail (components/ui/elide-id.ts), the whole id in the
// tooltip and the URL, and the pages copy it whole.

const state = readState().console;
const run = randomBytes(3).toString("hex");

test("a gateway-long invocation id is shown elided on the queue, task and invocation pages, and copied whole", async ({
  page,
  context,
  request,
}) => {
  const task = `support-conversation-${run}-2026-12-07`;
  const id = `${task}:${"9f3c".repeat(16)}:gw-${run}ab`;
  expect(id.length).toBeGreaterThan(100);
  const base = { task_id: task, invocation_id: id, tool: "issue_refund", effect_class: "money" };
  const sent = await request.post(`${state.baseURL}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${state.key}` },
    data: {
      records: [
        { ...base, event_id: `${run}-i`, attempt: 1, phase: "intent", at: new Date(Date.now() - 60_000).toISOString() },
        {
          ...base,
          event_id: `${run}-o`,
          attempt: 1,
          phase: "outcome",
          at: new Date().toISOString(),
          envelope: { outcome: "unknown", effect_applied: "unknown" },
        },
      ],
    },
  });
  expect(sent.status()).toBe(207);
  const shown = `${id.slice(0, 24)}…${id.slice(-12)}`;

  await signIn(page, state.baseURL, state.adminEmail, state.adminPassword);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${state.baseURL}/?q=${encodeURIComponent(task)}`);
  const row = page.getByTestId("invocation-row").filter({ hasText: "issue_refund" }).first();
  // The queue's column is narrow: a shorter head, the tail whole.
  await expect(row.getByTestId("elided-id")).toHaveText(`${id.slice(0, 8)}…${id.slice(-12)}`);
  await expect(row.locator(`[title="${id}"]`)).toHaveCount(1);
  await page.screenshot({ path: `${OUT_DIR}/long-id-queue.png`, fullPage: false });

  await page.goto(`${state.baseURL}/invocations/${encodeURIComponent(id)}`);
  const header = page.getByTestId("elided-id");
  await expect(header.first()).toHaveText(shown);
  await expect(page).toHaveTitle(`Invocation ${shown} · Settle`);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy the invocation id" }).first().click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(id);
  await page.screenshot({ path: `${OUT_DIR}/long-id-invocation.png`, fullPage: false });

  await page.goto(`${state.baseURL}/tasks/${encodeURIComponent(task)}`);
  await expect(page.getByTestId("elided-id").first()).toHaveText(shown);
  await page.screenshot({ path: `${OUT_DIR}/long-id-task.png`, fullPage: false });
});
