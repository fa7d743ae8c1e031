import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { docScreenshot } from "./screenshots";
import { OUT_DIR, readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// Approve with edits and a reply to the agent in the console (issue 40 §2, docs/outcome-model.md §4): the
// operator fixes the amount in the dialog, sees what changed, approves; the runtime's decision carries the
// edited arguments and the page, the timeline and the audit trail show the diff. A rejection's message to the
// agent reaches the decision API and is shown where the action is.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");
const password = "edits e2e password";
const op = `edits-op-${run}@example.com`;
const runtime = `edits-${run}`;
let runtimeKey = "";

const ORIGINAL = { charge: "ch_3PqR", amount: 100, currency: "EUR", reason: "damaged on arrival" };

test.beforeAll(() => {
  settleCli(state.databaseUrl, ["users", "create", "--email", op, "--role", "operator", "--password", password]);
  runtimeKey = settleCli(state.databaseUrl, ["keys", "create", runtime]);
});

test.describe.configure({ mode: "serial" });

/** A refund the agent may not make without a person: awaiting approval. */
async function askApproval(request: APIRequestContext, id: string) {
  const res = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${runtimeKey}` },
    data: {
      records: [
        {
          event_id: `${id}-1`,
          task_id: `task-${id}`,
          invocation_id: id,
          attempt: 1,
          tool: "create_refund",
          effect_class: "money",
          idempotency_key: `key-${id}`,
          arguments: ORIGINAL,
          envelope: { ok: false, commit_state: "not_committed", next_action: "request_approval" },
        },
      ],
    },
  });
  expect(res.status()).toBe(207);
  expect((await res.json()).rejected).toBe(0);
}

async function decision(request: APIRequestContext, id: string) {
  const res = await request.get(`${base}/api/v1/invocations/${id}/decision`, {
    headers: { authorization: `Bearer ${runtimeKey}` },
  });
  expect(res.status()).toBe(200);
  return res.json();
}

const page_ = (id: string) => `${base}/invocations/${id}?runtime=${runtime}`;

/** Replaces the amount in the editor's JSON text, as a person would type it. */
async function editAmount(page: Page, amount: string) {
  const editor = page.getByRole("dialog").getByLabel("Arguments (JSON)");
  const text = await editor.inputValue();
  await editor.fill(text.replace('"amount": 100', `"amount": ${amount}`));
}

test("the operator edits the amount, sees the diff and approves; the decision carries the edited arguments", async ({
  page,
  request,
}) => {
  const id = `refund-edit-${run}`;
  await askApproval(request, id);
  await signIn(page, base, op, password, `/invocations/${id}?runtime=${runtime}`);
  await page.goto(page_(id));
  await page.getByRole("button", { name: /^Approve with edits/ }).click();
  const dialog = page.getByRole("dialog", { name: "Approve with edits: create_refund" });
  await expect(dialog).toBeVisible();
  const approve = dialog.getByRole("button", { name: "Approve with these edits" });
  await expect(dialog.getByTestId("edit-diff-empty")).toContainText("Nothing yet");
  await expect(approve).toBeDisabled();

  // Broken JSON: told where, and nothing can be sent.
  const editor = dialog.getByLabel("Arguments (JSON)");
  await editor.fill('{ "charge": "ch_3PqR", "amount": 50,, }');
  await expect(dialog.getByTestId("arguments-error")).toContainText("Not valid JSON (line 1, column");
  await expect(editor).toHaveAttribute("aria-invalid", "true");
  await expect(approve).toBeDisabled();
  await dialog.getByRole("button", { name: "Undo my changes" }).click();

  // A value Settle would have to redact is refused by the server, with its reason, and changes nothing.
  const text = await editor.inputValue();
  await editor.fill(text.replace('"damaged on arrival"', '"[redacted]"'));
  await approve.click();
  await expect(dialog.getByRole("alert")).toContainText("Settle refused this edit");
  await expect(dialog.getByRole("alert")).toContainText("[redacted]");
  await dialog.getByRole("button", { name: "Undo my changes" }).click();
  await expect(dialog.getByRole("alert")).toHaveCount(0);

  // The amount's own field: text that is no number is pointed out and not taken; a number is.
  const amount = dialog.getByTestId("argument-fields").getByLabel("amount", { exact: true });
  await amount.fill("5O");
  await expect(amount).toHaveAttribute("aria-invalid", "true");
  await expect(dialog.getByTestId("edit-diff-empty")).toBeVisible();
  await amount.fill("50");
  await expect(editor).toHaveValue(/"amount": 50,/);
  const diff = dialog.getByTestId("edit-diff");
  await expect(diff.getByTestId("diff-row")).toHaveCount(1);
  const changed = diff.locator('[data-change="changed"]');
  await expect(changed).toContainText("amount");
  await expect(changed).toContainText("100");
  await expect(changed).toContainText("50");
  await dialog.getByLabel("Note (optional)").fill("Half, as agreed with the customer (ticket T-9).");
  await page.screenshot({ path: docScreenshot("approve-with-edits.png") });
  await approve.click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Approved");

  // What the runtime reads: run the call with these.
  expect(await decision(request, id)).toMatchObject({
    decision: "proceed",
    approved_arguments: { ...ORIGINAL, amount: 50 },
    reply: null,
  });

  // Who edited what: on the page, on the timeline and in the audit trail.
  const panel = page.getByTestId("arguments-edit");
  await expect(panel).toHaveAttribute("data-state", "approved");
  await expect(panel).toContainText(op);
  const row = panel.getByTestId("arguments-edit-diff").getByTestId("diff-row");
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute("data-change", "changed");
  await expect(row).toContainText("amount");
  const timeline = page.getByRole("list", { name: "Timeline, oldest first" });
  await expect(timeline).toContainText("Approve with edits");
  await expect(timeline.getByTestId("action-edit")).toContainText("amount");
  const trail = page.getByTestId("audit-trail");
  await expect(trail).toContainText("Half, as agreed with the customer");
  await expect(trail.getByTestId("action-edit").getByTestId("diff-row")).toContainText("50");
  await panel.scrollIntoViewIfNeeded();
  await page.screenshot({ path: docScreenshot("approved-with-edits.png") });
  await trail.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${OUT_DIR}/approved-with-edits-trail.png` });

  // The task's timeline and the admin audit page show the same diff.
  await page.goto(`${base}/tasks/task-${id}?runtime=${runtime}`);
  await expect(page.getByTestId("action-edit").first()).toContainText("amount");
  await page.goto(`${base}/audit?q=${id}`);
  const entry = page.getByTestId("audit-row").filter({ hasText: "Approve with edits" });
  await expect(entry.getByTestId("action-edit")).toContainText("amount");
});

test("a rejection with a message to the agent: the decision API returns it, the page shows it", async ({
  page,
  request,
}) => {
  const id = `refund-reply-${run}`;
  await askApproval(request, id);
  await signIn(page, base, op, password, `/invocations/${id}?runtime=${runtime}`);
  await page.goto(page_(id));
  await page.getByRole("button", { name: "Reject d", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Reject: create_refund" });
  await expect(dialog).toContainText("The agent receives this as the tool's result");
  const reply = "Refund at most 50 EUR; ask the customer first.";
  await dialog.getByLabel("Message to the agent (optional)").fill(reply);
  await dialog.getByLabel("Note (optional)").fill("Over the limit for damaged goods.");
  await page.screenshot({ path: `${OUT_DIR}/reject-with-reply.png` });
  await dialog.getByRole("button", { name: "Reject" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Rejected");

  expect(await decision(request, id)).toMatchObject({ decision: "abandon", reply, approved_arguments: null });
  await expect(page.getByTestId("audit-trail").getByTestId("action-reply")).toContainText(reply);
  await expect(page.getByRole("list", { name: "Timeline, oldest first" }).getByTestId("action-reply")).toContainText(
    reply,
  );
  await page.getByTestId("audit-trail").scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${OUT_DIR}/rejected-with-reply.png` });
});

test("from the queue: a row's Approve with edits reads the call's arguments and approves the edit", async ({
  page,
  request,
}) => {
  const id = `refund-queue-${run}`;
  await askApproval(request, id);
  await signIn(page, base, op, password, `/?runtime=${runtime}`);
  const row = page.getByTestId("invocation-row").filter({ has: page.getByText(id, { exact: true }) });
  await row.getByRole("button", { name: /Actions/ }).click();
  await page.getByRole("menuitem", { name: /^Approve with edits/ }).click();
  const dialog = page.getByRole("dialog", { name: "Approve with edits: create_refund" });
  await expect(dialog.getByLabel("Arguments (JSON)")).toHaveValue(/"amount": 100/);
  await editAmount(page, "75");
  await expect(dialog.getByTestId("edit-diff").locator('[data-change="changed"]')).toContainText("75");
  await dialog.getByRole("button", { name: "Approve with these edits" }).click();
  await expect(dialog).toBeHidden();
  await expect(row).toBeHidden();
  expect(await decision(request, id)).toMatchObject({ approved_arguments: { ...ORIGINAL, amount: 75 } });
});
