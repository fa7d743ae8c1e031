import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { OUT_DIR, readState } from "./server";
import { addCatalogEntry } from "./catalog";
import { signIn } from "./sign-in";

// Verifiers on the console server (PostgreSQL, background jobs every second): an admin turns a tool's verifier on
// in the catalog; a call of it times out; while an operator watches the invocation page, Settle asks, the
// runtime's worker answers "found", and the page shows it settled, by whom and with what evidence.

const state = readState().console;
const base = state.baseURL;
const auth = { authorization: `Bearer ${state.key}` };

test("an unknown refund is settled by the runtime's verifier while an operator watches", async ({ page, request }) => {
  const tool = `refund_${randomBytes(3).toString("hex")}`;
  const id = `inv-${tool}`;
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/tool-catalog");
  const row = await addCatalogEntry(page, tool);
  await expect(row).toContainText("off");

  await row.getByRole("button", { name: `Edit the verifier of ${tool}` }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("First ask after (s)").fill("1");
  // Out of range: the form refuses it before it is sent, and the dialog stays.
  const tries = dialog.getByLabel("Tries before a person decides");
  await tries.fill("0");
  await dialog.getByRole("button", { name: "Save verifier" }).click();
  expect(await tries.evaluate((el: HTMLInputElement) => el.validity.rangeUnderflow)).toBe(true);
  await expect(dialog).toBeVisible();
  await tries.fill("3");
  await dialog.getByRole("button", { name: "Save verifier" }).click();
  await expect(
    page.getByRole("status").filter({ hasText: `${tool}: Settle asks billing-agent's verifier` }),
  ).toBeVisible();
  await expect(row).toContainText("after 1 s, every 60 s, 3 tries");

  const sent = await request.post(`${base}/api/v1/envelopes`, {
    headers: auth,
    data: {
      records: [
        {
          event_id: `${id}-out`,
          task_id: `task-${tool}`,
          invocation_id: id,
          attempt: 1,
          tool,
          effect_class: "money",
          idempotency_key: `key-${tool}`,
          arguments: { amount: 4200, currency: "EUR" },
          at: new Date(Date.now() - 300_000).toISOString(),
          envelope: { title: "Gateway Timeout", status: 504 },
        },
      ],
    },
  });
  expect((await sent.json()).accepted).toBe(1);

  await page.goto(`${base}/invocations/${id}?runtime=billing-agent`);
  const panel = page.getByTestId("verification-panel");
  await expect(panel).toContainText("Settle is checking", { timeout: 10_000 });

  // The runtime's worker takes its ask (a long poll) and answers it.
  let item: { id: string; invocation_id: string; try: number } | undefined;
  for (let i = 0; i < 10 && !item; i += 1) {
    const work = await request.get(`${base}/api/v1/verifications?wait=5&worker=e2e`, { headers: auth });
    expect(work.status()).toBe(200);
    item = ((await work.json()).items as Array<{ id: string; invocation_id: string; try: number }>).find(
      (x) => x.invocation_id === id,
    );
  }
  expect(item?.try).toBe(1);
  await expect(panel).toContainText("runtime:billing-agent/e2e is looking it up");
  const answered = await request.post(`${base}/api/v1/verifications/${item!.id}`, {
    headers: auth,
    data: { found: true, evidence: "GET /refunds?idempotency_key=… → re_4200", ref: "re_4200" },
  });
  expect((await answered.json()).reading).toBe("found");

  await expect(panel).toContainText("Settled by billing-agent's verifier on try 1 of 3");
  await expect(panel).toContainText("re_4200");
  await expect(page.getByText("Reconciled").first()).toBeVisible();
  await page.screenshot({ path: `${OUT_DIR}/screenshots/verifier-settled.png`, fullPage: true });
});
