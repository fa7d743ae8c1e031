import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { docScreenshot } from "./screenshots";
import { readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// A possible duplicate effect on the PostgreSQL console (decision 028): a
// refund committed under one key, then the same refund reported without the
// guard under a new key. It waits in the queue as a possible duplicate
// effect; the operator opens it, sees the earlier refund, and dismisses it
// (the refund was due twice); it leaves the queue and the audit trail says who.

const state = readState().console;
const base = state.baseURL;

test("a possible duplicate effect waits in the queue; the operator dismisses it on the invocation page, audited", async ({
  page,
}) => {
  const run = randomBytes(3).toString("hex");
  const runtime = `dup-agent-${run}`;
  const key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  const args = { charge: `ch_${run}`, amount_cents: 4_900, currency: "eur" };
  const send = async (records: object[]) => {
    const res = await fetch(`${base}/api/v1/envelopes`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ records }),
    });
    expect(res.status).toBe(207);
    expect(((await res.json()) as { rejected: number }).rejected).toBe(0);
  };
  const first = `refund-${run}-a`;
  const second = `refund-${run}-b`;
  await send([
    {
      event_id: `${first}:i`,
      task_id: `order-${run}`,
      invocation_id: first,
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: `key-a-${run}`,
      phase: "intent",
      at: at(-120),
      arguments: { ...args, idempotency_key: `key-a-${run}` },
    },
    {
      event_id: `${first}:o`,
      task_id: `order-${run}`,
      invocation_id: first,
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: `key-a-${run}`,
      at: at(-119),
      envelope: { ok: true, commit_state: "committed" },
    },
  ]);
  // The model retried with a fresh key; the runtime reported it afterwards, without asking the guard.
  await send([
    {
      event_id: `${second}:i`,
      task_id: `order-${run}`,
      invocation_id: second,
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: `key-b-${run}`,
      phase: "intent",
      at: at(-60),
      arguments: { ...args, idempotency_key: `key-b-${run}` },
    },
    {
      event_id: `${second}:o`,
      task_id: `order-${run}`,
      invocation_id: second,
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: `key-b-${run}`,
      at: at(-59),
      envelope: { ok: true, commit_state: "committed" },
    },
  ]);

  await signIn(page, base, state.adminEmail, state.adminPassword, `/?runtime=${runtime}`);
  const row = page.getByTestId("invocation-row").filter({ hasText: second });
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId("possible-duplicate")).toHaveText("⚠ possible duplicate effect");
  await expect(page.getByTestId("invocation-row").filter({ hasText: first })).toHaveCount(0);

  await page.goto(`${base}/invocations/${encodeURIComponent(second)}?runtime=${runtime}`);
  const panel = page.getByTestId("possible-duplicate-panel");
  await expect(panel.getByRole("heading", { name: "⚠ Possible duplicate effect" })).toBeVisible();
  await expect(panel.getByRole("link", { name: first })).toBeVisible();
  // The records show the arguments they carried, with the digest both calls share.
  await expect(page.locator("summary").filter({ hasText: "Arguments" }).first()).toContainText("sha256:");
  await page.screenshot({ path: docScreenshot("possible-duplicate.png"), fullPage: false });

  await panel.getByRole("button", { name: "Not a duplicate…" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("heading", { name: "Dismiss: not a duplicate" })).toBeVisible();
  await dialog.getByLabel("Why (optional)").fill("The customer returned two items: two refunds were due.");
  await dialog.getByRole("button", { name: "Dismiss" }).click();
  await expect(dialog).toHaveCount(0);
  await expect(panel.getByTestId("duplicate-review")).toContainText(
    `Dismissed: not a duplicate by ${state.adminEmail}`,
  );
  await expect(page.getByText("The customer returned two items: two refunds were due.").first()).toBeVisible();
  await page.screenshot({ path: docScreenshot("possible-duplicate-dismissed.png"), fullPage: false });

  // Out of the queue; the invocation's own status never changed.
  await page.goto(`${base}/?runtime=${runtime}`);
  await expect(page.getByTestId("invocation-row").filter({ hasText: second })).toHaveCount(0);
  const view = (await (
    await fetch(`${base}/api/v1/invocations/${encodeURIComponent(second)}`, {
      headers: { authorization: `Bearer ${key}` },
    })
  ).json()) as {
    status: string;
    duplicate_review: string;
    actions: Array<{ action: string; actor: string }>;
  };
  expect(view).toMatchObject({ status: "succeeded", duplicate_review: "dismissed" });
  expect(view.actions.map((a) => [a.action, a.actor])).toEqual([
    ["flag_possible_duplicate", "system"],
    ["dismiss_duplicate", state.adminEmail],
  ]);
});
