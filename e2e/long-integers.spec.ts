import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { readState } from "./server";
import { signIn } from "./sign-in";

// Issue 36: an integer above 2^53 in a call's arguments reached the approver rounded (12345678901234567890
// shown as 12345678901234567000). On the built server, through the browser: the Arguments card, the approval
// dialog and each attempt's arguments show every digit, and a run with other low digits is flagged.

const state = readState().console;
const base = state.baseURL;
const headers = { authorization: `Bearer ${state.key}`, "content-type": "application/json" };

test("the approver sees every digit of a long integer, and a run with other digits is flagged", async ({
  page,
  request,
}) => {
  const id = `long-${randomBytes(3).toString("hex")}`;
  const record = (event: string, attempt: number, order: string, envelope: string) =>
    `{"event_id": "${id}-${event}", "task_id": "task-${id}", "invocation_id": "${id}", "attempt": ${attempt},
      "tool": "create_refund", "effect_class": "money", "idempotency_key": "key-${id}",
      "arguments": {"order": ${order}, "account": -18446744073709551617, "amount": 5000, "currency": "EUR"},
      "envelope": ${envelope}}`;
  // Text, not an object: the test's own JSON.stringify would round the number before Settle saw it.
  const ask = await request.post(`${base}/api/v1/envelopes`, {
    headers,
    data: record(
      "ask",
      1,
      "12345678901234567890",
      '{"ok": false, "commit_state": "not_committed", "next_action": "request_approval"}',
    ),
  });
  expect((await ask.json()).accepted).toBe(1);

  await signIn(page, base, state.adminEmail, state.adminPassword, `/invocations/${id}?runtime=billing-agent`);
  await page.goto(`${base}/invocations/${id}?runtime=billing-agent`);
  const card = page.getByTestId("call-arguments");
  await expect(card).toContainText('"order": 12345678901234567890');
  await expect(card).toContainText('"account": -18446744073709551617');
  await expect(card).not.toContainText("12345678901234567000");
  // The page was rendered on the server; read again through the console's client, it still says the same.
  await page.reload();
  await expect(card).toContainText('"order": 12345678901234567890');

  await page.getByRole("button", { name: "Approve a", exact: true }).click();
  const dialog = page.getByRole("dialog");
  const decided = dialog.getByTestId("decided-call");
  await expect(decided).toContainText('"order": 12345678901234567890');
  await expect(decided).toContainText("order 12345678901234567890");
  await page.screenshot({ path: `${process.env.SETTLE_E2E_OUT || "test-results"}/long-integers-approve.png` });
  await dialog.getByRole("button", { name: /^Approve/ }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Approved");

  const ran = await request.post(`${base}/api/v1/envelopes`, {
    headers,
    data: record("ran", 2, "12345678901234567000", '{"ok": true, "commit_state": "committed"}'),
  });
  expect((await ran.json()).accepted).toBe(1);
  await page.reload();
  await expect(page.getByRole("region", { name: /It ran with arguments other than those approved/ })).toBeVisible();
  await expect(card).toContainText('"order": 12345678901234567000');
  await page.screenshot({
    path: `${process.env.SETTLE_E2E_OUT || "test-results"}/long-integers-flagged.png`,
    fullPage: true,
  });
});

test("an operator approves with edits a long integer, and the runtime is handed every digit of the edit", async ({
  page,
  request,
}) => {
  const id = `long-edit-${randomBytes(3).toString("hex")}`;
  const ask = `{"event_id": "${id}-ask", "task_id": "task-${id}", "invocation_id": "${id}", "tool": "create_refund",
    "effect_class": "money", "idempotency_key": "key-${id}",
    "arguments": {"order": 12345678901234567890, "amount": 5000, "currency": "EUR"},
    "envelope": {"ok": false, "commit_state": "not_committed", "next_action": "request_approval"}}`;
  const sent = await request.post(`${base}/api/v1/envelopes`, { headers, data: ask });
  expect((await sent.json()).accepted).toBe(1);

  await signIn(page, base, state.adminEmail, state.adminPassword, `/invocations/${id}?runtime=billing-agent`);
  await page.goto(`${base}/invocations/${id}?runtime=billing-agent`);
  await page.getByRole("button", { name: /^Approve with edits/ }).click();
  const dialog = page.getByRole("dialog", { name: "Approve with edits: create_refund" });
  const order = dialog.getByTestId("argument-fields").getByLabel("order", { exact: true });
  await expect(order).toHaveValue("12345678901234567890");
  await order.fill("12345678901234567891");
  await expect(dialog.getByLabel("Arguments (JSON)")).toHaveValue(/"order": 12345678901234567891,/);
  const changed = dialog.getByTestId("edit-diff").locator('[data-change="changed"]');
  await expect(changed).toContainText("12345678901234567890");
  await expect(changed).toContainText("12345678901234567891");
  await page.screenshot({ path: `${process.env.SETTLE_E2E_OUT || "test-results"}/long-integers-edit.png` });
  await dialog.getByRole("button", { name: "Approve with these edits" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Approved");
  await expect(page.getByTestId("arguments-edit")).toContainText("12345678901234567891");

  // What the runtime's client reads, as text: Playwright's own JSON.parse would round it.
  const decision = await request.get(`${base}/api/v1/invocations/${id}/decision`, { headers });
  const text = await decision.text();
  expect(decision.status()).toBe(200);
  expect(text).toContain('"decision":"proceed"');
  expect(text).toMatch(/"approved_arguments":\{[^}]*"order":12345678901234567891[,}]/);
  expect(text).not.toContain("12345678901234567000");

  // The admin audit page shows the approver's diff with every digit.
  await page.goto(`${base}/audit?q=${id}`);
  const edit = page.getByTestId("audit-row").getByTestId("action-edit");
  await expect(edit).toContainText("12345678901234567890");
  await expect(edit).toContainText("12345678901234567891");
  await expect(edit).not.toContainText("12345678901234567000");
  await page.screenshot({ path: `${process.env.SETTLE_E2E_OUT || "test-results"}/long-integers-audit.png` });
});
