import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { docScreenshot } from "./screenshots";
import { readState } from "./server";
import { addCatalogEntry } from "./catalog";
import { signIn } from "./sign-in";

// What the call was and where to check it, on the console server: an admin gives a tool a summary template and a
// runbook in the catalog; unknown calls of it arrive with their arguments; the queue shows each call's summary, the
// invocation page its summary, arguments and runbook link; the settling dialog starts with nothing chosen and Enter
// does nothing until a choice is made.

const state = readState().console;
const base = state.baseURL;
const auth = { authorization: `Bearer ${state.key}` };

test("summaries in the queue, the runbook on the page, and a dialog with nothing chosen", async ({ page, request }) => {
  const tool = `refund_${randomBytes(3).toString("hex")}`;
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/tool-catalog");
  const row = await addCatalogEntry(page, tool);
  await expect(row).toContainText("first arguments");

  await row.getByRole("button", { name: `Edit the summary and runbook of ${tool}` }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Summary").fill("{{args.amount}} {{args.currency}} to {{args.customer}}");
  await dialog.getByLabel("Where to check it (link)").fill("https://{{args.host}}/refunds");
  await dialog.getByRole("button", { name: "Save" }).click();
  // The server refuses a link whose host a call could choose, and says why; the dialog stays.
  await expect(dialog).toContainText("scheme and host are fixed");
  await dialog
    .getByLabel("Where to check it (link)")
    .fill("https://dashboard.example.com/refunds?q={{idempotency_key}}");
  await dialog.getByLabel("Steps").fill("Search refunds by the key. A refund listed there means it happened.");
  await dialog.getByRole("button", { name: "Save" }).click();
  await expect(row).toContainText("summary, link, steps");

  const customers = ["cus_ada", "cus_bo", "cus_cy", "cus_di", "cus_ed", "cus_fa"];
  const sent = await request.post(`${base}/api/v1/envelopes`, {
    headers: auth,
    data: {
      records: customers.map((customer, i) => ({
        event_id: `${tool}-${i}-out`,
        task_id: `task-${tool}-${i}`,
        invocation_id: `${tool}-${i}`,
        tool,
        effect_class: "money",
        idempotency_key: `rf/${tool}-${i}`,
        arguments: { amount: 1000 + i * 150, currency: "EUR", customer, api_key: "sk_live_never_shown" },
        at: new Date(Date.now() - 60_000 * (i + 1)).toISOString(),
        envelope: { title: "Gateway Timeout", status: 504 },
      })),
    },
  });
  expect((await sent.json()).accepted).toBe(customers.length);

  await page.goto(`${base}/?tool=${tool}`);
  const summaries = page.getByTestId("call-summary");
  await expect(summaries).toHaveCount(customers.length);
  await expect(summaries.filter({ hasText: "1000 EUR to cus_ada" })).toBeVisible();

  // At a realistic volume: forty more unknown calls of four tools, each with its arguments; every row says what
  // its call was (a tool without a template: its first arguments).
  const kinds = [
    (i: number) => ({
      tool: "create_invoice",
      effect_class: "create",
      arguments: { customer: `cus_${100 + i}`, total: 80 + i * 7, currency: "EUR" },
    }),
    (i: number) => ({
      tool: "send_email",
      effect_class: "send",
      arguments: { to: `buyer${i}@example.com`, subject: `Your order #${4100 + i}` },
    }),
    (i: number) => ({
      tool: "delete_rows",
      effect_class: "destructive",
      arguments: { table: "carts", where: `age > ${30 + i} days` },
    }),
    (i: number) => ({
      tool: "charge_card",
      effect_class: "money",
      arguments: { amount: 1999 + i * 100, currency: "USD", card: `card_${i}` },
    }),
  ];
  const more = await request.post(`${base}/api/v1/envelopes`, {
    headers: auth,
    data: {
      records: Array.from({ length: 40 }, (_, i) => ({
        ...kinds[i % 4]!(i),
        event_id: `${tool}-many-${i}-out`,
        task_id: `task-${tool}-many-${Math.floor(i / 3)}`,
        invocation_id: `${tool}-many-${i}`,
        idempotency_key: `many/${tool}-${i}`,
        at: new Date(Date.now() - 30_000 * (i + 1)).toISOString(),
        envelope: { title: "Gateway Timeout", status: 504 },
      })),
    },
  });
  expect((await more.json()).accepted).toBe(40);
  await page.goto(`${base}/?runtime=billing-agent&q=${tool}-many`);
  await expect(summaries.filter({ hasText: "amount 5899 · currency USD · card card_39" })).toBeVisible();
  await expect(page.getByTestId("invocation-row")).toHaveCount(40);
  await expect(summaries).toHaveCount(40);
  await page.screenshot({ path: docScreenshot("queue-summaries.png"), fullPage: false });

  await page.goto(`${base}/invocations/${tool}-0?runtime=billing-agent`);
  await expect(page.getByTestId("call-summary")).toHaveText("1000 EUR to cus_ada");
  await expect(page.getByText("Verify it happened").first()).toBeVisible();
  const runbook = page.getByTestId("runbook");
  const link = runbook.getByRole("link", { name: /Check in dashboard\.example\.com/ });
  await expect(link).toHaveAttribute("href", `https://dashboard.example.com/refunds?q=rf%2F${tool}-0`);
  await expect(runbook).toContainText("A refund listed there means it happened.");
  const args = page.getByTestId("call-arguments");
  await expect(args).toContainText('"customer": "cus_ada"');
  await expect(args).not.toContainText("sk_live_never_shown");
  await page.screenshot({ path: docScreenshot("invocation-runbook.png"), fullPage: false });

  await page.getByRole("button", { name: "Record verification" }).click();
  const record = page.getByRole("dialog");
  await expect(record.getByTestId("decided-call")).toContainText("1000 EUR to cus_ada");
  for (const option of await record.getByRole("radio").all()) await expect(option).not.toBeChecked();
  const confirm = record.getByRole("button", { name: "Choose what you found" });
  await expect(confirm).toBeDisabled();
  await record.getByLabel("Evidence").fill("Nothing under the key in the refunds list.");
  await record.getByLabel("Evidence").press("Enter");
  await record.getByLabel("Evidence").press("Control+Enter");
  await expect(record).toBeVisible();
  await page.screenshot({ path: docScreenshot("dialog-nothing-chosen.png"), fullPage: false });
  await record.getByRole("radio", { name: /Absent/ }).check();
  await expect(record.getByRole("button", { name: "Record: NOT found" })).toBeEnabled();
  await record.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByTestId("call-summary")).toHaveText("1000 EUR to cus_ada");
});

test("a call that ran with other arguments than approved waits in the queue until a person checks what ran", async ({
  page,
  request,
}) => {
  const id = `approved-${randomBytes(3).toString("hex")}`;
  const base_ = { task_id: `task-${id}`, invocation_id: id, tool: "create_refund", idempotency_key: `key-${id}` };
  const ask = await request.post(`${base}/api/v1/envelopes`, {
    headers: auth,
    data: {
      ...base_,
      event_id: `${id}-ask`,
      effect_class: "money",
      arguments: { amount: 50, currency: "EUR", customer: "cus_ann" },
      envelope: { ok: false, commit_state: "not_committed", next_action: "request_approval" },
    },
  });
  expect((await ask.json()).accepted).toBe(1);
  await signIn(page, base, state.adminEmail, state.adminPassword, `/invocations/${id}?runtime=billing-agent`);
  await page.goto(`${base}/invocations/${id}?runtime=billing-agent`);
  await page.getByRole("button", { name: "Approve a", exact: true }).click();
  await page
    .getByRole("dialog")
    .getByRole("button", { name: /^Approve/ })
    .click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Approved");

  const ran = await request.post(`${base}/api/v1/envelopes`, {
    headers: auth,
    data: {
      ...base_,
      event_id: `${id}-ran`,
      attempt: 2,
      arguments: { amount: 5000, currency: "EUR", customer: "cus_ann" },
      envelope: { ok: true, commit_state: "committed" },
    },
  });
  expect((await ran.json()).accepted).toBe(1);

  // Succeeded, and still in the queue with the flag.
  await page.goto(`${base}/?runtime=billing-agent&tool=create_refund`);
  const row = page.getByTestId("invocation-row").filter({ hasText: id });
  await expect(row).toContainText("Succeeded");
  await expect(row.getByTestId("args-mismatch")).toBeVisible();
  await row.getByRole("link", { name: "create_refund" }).click();
  const check = page.getByRole("region", { name: /It ran with arguments other than those approved/ });
  await check.getByRole("button", { name: "I checked what ran…" }).click();
  const dialog = page.getByRole("dialog", { name: "I checked what ran" });
  await expect(dialog.getByRole("button", { name: "Mark as checked" })).toBeDisabled();
  await dialog.getByLabel("What you found").fill("5000 EUR went out; refunded 4950 in the dashboard.");
  await page.screenshot({ path: docScreenshot("arguments-check.png") });
  await dialog.getByRole("button", { name: "Mark as checked" }).click();
  await expect(check).toContainText(`Checked by ${state.adminEmail}`);
  await page.goto(`${base}/?runtime=billing-agent&tool=create_refund`);
  await expect(page.getByTestId("invocation-row").filter({ hasText: id })).toHaveCount(0);
});
