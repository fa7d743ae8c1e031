import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext, type Browser, type Page } from "@playwright/test";
import pg from "pg";
import { OUT_DIR, readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// The invocation and task pages on the PostgreSQL console: acting through
// the state machine, a stale version between two people, a viewer who cannot
// act, hostile text that stays text, and screenshots at realistic data.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");
const password = "timeline e2e password";
const people = {
  ana: `ana-${run}@example.com`,
  bo: `bo-${run}@example.com`,
  vi: `viewer-${run}@example.com`,
};
let anaToken = "";

test.beforeAll(() => {
  settleCli(state.databaseUrl, [
    "users",
    "create",
    "--email",
    people.ana,
    "--role",
    "operator",
    "--password",
    password,
  ]);
  settleCli(state.databaseUrl, ["users", "create", "--email", people.bo, "--role", "operator", "--password", password]);
  settleCli(state.databaseUrl, ["users", "create", "--email", people.vi, "--role", "viewer", "--password", password]);
  anaToken = settleCli(state.databaseUrl, ["tokens", "create", "--email", people.ana]);
});

async function ingest(request: APIRequestContext, records: object[]) {
  const res = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${state.key}` },
    data: { records },
  });
  expect(res.status()).toBe(207);
  expect((await res.json()).rejected).toBe(0);
}

/** An invocation whose create_order call timed out: outcome unknown. */
async function unknownInvocation(request: APIRequestContext, name: string) {
  const id = `${name}-${run}`;
  const started = Date.now() - 60_000;
  const r = {
    task_id: `ord-${id}`,
    invocation_id: id,
    tool: "create_order",
    effect_class: "create",
    idempotency_key: `key-${id}`,
  };
  await ingest(request, [
    { ...r, event_id: `${id}-i1`, attempt: 1, phase: "intent", at: new Date(started).toISOString(), budget_left_s: 42 },
    {
      ...r,
      event_id: `${id}-o1`,
      attempt: 1,
      at: new Date(started + 8000).toISOString(),
      envelope: { content: [{ type: "text", text: "upstream timed out" }], isError: true },
    },
  ]);
  return id;
}

async function readInvocation(request: APIRequestContext, id: string) {
  const res = await request.get(`${base}/api/v1/invocations/${encodeURIComponent(id)}?runtime=billing-agent`, {
    headers: { authorization: `Bearer ${anaToken}` },
  });
  expect(res.status()).toBe(200);
  return res.json();
}

const invocationUrl = (id: string) => `${base}/invocations/${encodeURIComponent(id)}?runtime=billing-agent`;

async function openAs(browser: Browser, email: string, url: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, base, email, password, url.slice(base.length));
  await page.goto(url);
  return page;
}

const actionsArea = (page: Page) => page.getByRole("region", { name: "What you can do" });

test("request verification → record verification (found) → reconciled, with the audit trail", async ({
  page,
  request,
}) => {
  const id = await unknownInvocation(request, "verify");
  await signIn(page, base, people.ana, password);
  await page.goto(invocationUrl(id));
  await expect(page.getByRole("heading", { level: 1 })).toContainText("create_order");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Outcome unknown");
  await expect(actionsArea(page).getByRole("button", { name: /retry/i })).toHaveCount(0);

  // From the keyboard: ? lists the keys, v is "Request verification".
  await page.keyboard.press("?");
  await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toContainText("Request verification");
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await page.keyboard.press("v");
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText("Request verification: create_order");
  await dialog.getByLabel("Note (optional)").fill("please probe the order service");
  await dialog.getByRole("button", { name: "Request verification" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Verifying");
  await expect(page.getByText("The runtime is told:")).toContainText("verify");

  await actionsArea(page)
    .getByRole("button", { name: /^Record verification/ })
    .click();
  // Nothing is chosen for the operator: the confirm button waits for a choice, and Enter does nothing.
  const undecided = dialog.getByRole("button", { name: "Choose what you found" });
  await expect(undecided).toBeDisabled();
  await dialog.getByLabel("Evidence").fill("Order ORD-991 exists in the order service, created 05:12:03");
  await dialog.getByLabel("Evidence").press("Enter");
  await expect(dialog).toBeVisible();
  for (const label of [/^Found/, /^Absent/, /^Inconclusive/]) await expect(dialog.getByLabel(label)).not.toBeChecked();
  await dialog.getByLabel(/^Found/).check();
  await dialog.getByLabel("Evidence").fill("Order ORD-991 exists in the order service, created 05:12:03");
  await dialog.getByRole("button", { name: "Record: found (committed)" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Reconciled");
  await expect(page.getByTestId("resolution")).toContainText(`Settled as committed by ${people.ana}`);
  await expect(page.getByTestId("resolution")).toContainText("Order ORD-991 exists");

  const trail = page.getByTestId("audit-trail");
  await expect(trail.getByRole("row")).toHaveCount(3);
  await expect(trail.getByRole("row").nth(1)).toContainText(people.ana);
  await expect(trail.getByRole("row").nth(1)).toContainText("Request verification");
  await expect(trail.getByRole("row").nth(1)).toContainText(/Outcome unknown → \W*Verifying/);
  await expect(trail.getByRole("row").nth(2)).toContainText("Record verification");
  await expect(trail.getByRole("row").nth(2)).toContainText(/Verifying → \W*Reconciled/);
  // The same two actions are on the timeline, where they happened.
  const story = page.getByRole("list", { name: "Timeline, oldest first" });
  await expect(story).toContainText(new RegExp(`Request verification\\s*by ${people.ana.replace(".", "\\.")}`));
  await expect(story).toContainText("Record verification");

  const stored = await readInvocation(request, id);
  expect(stored).toMatchObject({
    status: "reconciled",
    resolution: { by: "operator", actor: people.ana, commit_state: "committed" },
  });
  expect(stored.actions.map((a: { action: string }) => a.action)).toEqual([
    "request_verification",
    "record_verification",
  ]);
});

test("two operators on one invocation: the second gets “someone else changed this” and nothing is overwritten", async ({
  browser,
  request,
}) => {
  const id = await unknownInvocation(request, "race");
  const ana = await openAs(browser, people.ana, invocationUrl(id));
  const bo = await openAs(browser, people.bo, invocationUrl(id));

  // Bo opens the form on the version he sees...
  await actionsArea(bo)
    .getByRole("button", { name: /^Mark reconciled/ })
    .click();
  const boDialog = bo.getByRole("dialog");
  await boDialog.getByLabel(/^Not committed/).check();
  await boDialog.getByLabel("Evidence note (required)").fill("no order in the order service");

  // ...while Ana settles it first.
  await actionsArea(ana)
    .getByRole("button", { name: /^Mark reconciled/ })
    .click();
  const anaDialog = ana.getByRole("dialog");
  await anaDialog.getByLabel(/^Committed/).check();
  await anaDialog.getByLabel("Evidence note (required)").fill("order ORD-17 exists");
  await anaDialog.getByRole("button", { name: "Settle as committed" }).click();
  await expect(anaDialog).toBeHidden();

  await boDialog.getByRole("button", { name: "Settle as NOT committed" }).click();
  const alert = boDialog.getByRole("alert");
  await expect(alert).toContainText("Someone else changed this invocation");
  await expect(alert).toContainText("reconciled");
  await boDialog.getByRole("button", { name: "Close and review" }).click();
  await expect(bo.getByRole("heading", { level: 1 })).toContainText("Reconciled");
  await expect(bo.getByTestId("resolution")).toContainText(`Settled as committed by ${people.ana}`);

  const stored = await readInvocation(request, id);
  expect(stored).toMatchObject({
    status: "reconciled",
    resolution: { actor: people.ana, commit_state: "committed", note: "order ORD-17 exists" },
  });
  expect(stored.actions).toHaveLength(1);
  await ana.context().close();
  await bo.context().close();
});

test("a viewer sees no action, and the API refuses a viewer's action with 403", async ({ browser, request }) => {
  const id = await unknownInvocation(request, "viewer");
  const page = await openAs(browser, people.vi, invocationUrl(id));
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Outcome unknown");
  await expect(actionsArea(page)).toContainText("Your role is viewer");
  await expect(page.getByTestId("invocation-actions")).toHaveCount(0);
  await expect(
    actionsArea(page).getByRole("button", { name: /verification|reconciled|escalate|claim|assign|comment/i }),
  ).toHaveCount(0);
  await page.keyboard.press("v");
  await expect(page.getByRole("dialog")).toHaveCount(0);

  const before = await readInvocation(request, id);
  const res = await page.request.post(`${base}/api/v1/invocations/${encodeURIComponent(id)}/actions`, {
    headers: { origin: base },
    data: { action: "request_verification", version: before.version, runtime: "billing-agent" },
  });
  expect(res.status()).toBe(403);
  expect(await res.json()).toMatchObject({ ok: false, code: "FORBIDDEN" });
  const after = await readInvocation(request, id);
  expect(after).toMatchObject({ status: "outcome_unknown", version: before.version, actions: [] });
  await page.context().close();
});

test("hostile text in every shown field stays text: no script runs, no element is made, no link is followed", async ({
  page,
  request,
}) => {
  const img = `<img src=x onerror="window.__pwned=1">`;
  const script = `<script>window.__pwned=2</script>`;
  const evil = `${img}${script}`;
  const id = `inv ${evil} 100%25 ${run}`;
  const taskId = `task ${evil} ${run}`;
  const tool = `tool${evil}`;
  const t0 = Date.now() - 120_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const r = { task_id: taskId, invocation_id: id, tool, effect_class: "money" };
  await ingest(request, [
    { ...r, event_id: `${run}-evil-i1`, attempt: 1, phase: "intent", at: at(0) },
    {
      ...r,
      event_id: `${run}-evil-o1`,
      attempt: 1,
      at: at(5),
      envelope: {
        ok: false,
        commit_state: "unknown",
        code: `E_${evil}`,
        category: "dependency",
        next_action: "verify_operation",
        agent_message: `agent ${evil}`,
        user_message: `user ${evil} see https://evil.example/steal`,
      },
    },
    {
      ...r,
      event_id: `${run}-evil-o2`,
      attempt: 2,
      at: at(40),
      envelope: {
        outcome: "permanent",
        effect_applied: "partial",
        items: [
          { id: `row ${evil}`, applied: "no", reason: `reason ${evil}` },
          { id: "row_2", applied: "yes" },
        ],
        message: `msg ${evil}`,
      },
    },
  ]);

  await signIn(page, base, people.ana, password);
  await page.goto(`${base}/invocations/${encodeURIComponent(id)}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText(tool);
  await page.keyboard.press("n");
  await page.getByRole("dialog").getByLabel("Comment").fill(`note ${evil}`);
  await page.getByRole("dialog").getByRole("button", { name: "Comment" }).click();
  await expect(page.getByRole("dialog")).toBeHidden();
  for (const details of await page.locator("details").all()) await details.locator("summary").click();

  const header = page.locator("header").filter({ has: page.getByRole("heading", { level: 1 }) });
  await expect(header).toContainText(id);
  await expect(header).toContainText(taskId);
  await expect(header).toContainText(`user ${evil}`);
  const records = page.getByRole("region", { name: /Records, as received/ });
  await expect(records).toContainText(`agent ${evil}`);
  await expect(records).toContainText(`E_${evil}`);
  await expect(records.getByRole("table", { name: "Per-item results" })).toContainText(`reason ${evil}`);
  await expect(records.getByRole("table", { name: "Per-item results" })).toContainText(`row ${evil}`);
  await expect(records.getByTestId("item-counts")).toHaveText(/applied 1\s*✕ not applied 1\s*\? unknown 0/);
  await expect(records.locator("pre").filter({ hasText: "msg " })).toContainText(
    `"message": "msg ${evil.replaceAll('"', '\\"')}"`,
  );
  await expect(page.getByTestId("audit-trail")).toContainText(`note ${evil}`);
  await expect(page.getByRole("list", { name: "Timeline, oldest first" })).toContainText(`note ${evil}`);

  const inert = async () => {
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await expect(page.locator('img[src="x"]')).toHaveCount(0);
    await expect(page.locator('a[href*="evil.example"]')).toHaveCount(0);
    expect(
      await page.evaluate(
        () => [...document.scripts].filter((s) => s.textContent?.startsWith("window.__pwned")).length,
      ),
    ).toBe(0);
  };
  await inert();

  await header.getByRole("link", { name: taskId }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(taskId);
  await expect(page.getByRole("region", { name: "Invocations" })).toContainText(tool);
  await expect(page.getByRole("region", { name: "Invocations" })).toContainText(`user ${evil}`);
  await expect(page.getByRole("list", { name: "Timeline, oldest first" })).toContainText(`note ${evil}`);
  await inert();
});

test("screenshots: an invocation and a task timeline at realistic data", async ({ page }) => {
  test.setTimeout(240_000);
  // simulate exits 1 when one of its own checks fails; the data is what matters here.
  try {
    settleCli(state.databaseUrl, ["simulate", "--url", base, "--key", state.key, "--tasks", "200", "--seed", "7"]);
  } catch (error) {
    console.log(String(error).slice(0, 500));
  }
  const db = new pg.Client({ connectionString: state.databaseUrl });
  await db.connect();
  const pick = async (where: string) =>
    (
      await db.query<{ task_id: string; invocation_id: string }>(
        // The simulated runtime's only: other specs leave calls of their own runtimes on this server.
        `SELECT i.task_id, i.invocation_id FROM invocations i
          WHERE i.runtime_id = (SELECT id FROM runtimes WHERE name = 'billing-agent') AND ${where} LIMIT 1`,
      )
    ).rows[0];
  const story = await pick(`EXISTS (SELECT 1 FROM attempts a WHERE a.invocation_uid = i.id AND a.phase = 'probe')
        AND EXISTS (SELECT 1 FROM attempts a WHERE a.invocation_uid = i.id AND a.attempt_no = 1)
        -- A retry as a runtime numbers it: the fuzz specs leave calls whose only attempt is number 530210.
        AND EXISTS (SELECT 1 FROM attempts a WHERE a.invocation_uid = i.id AND a.attempt_no BETWEEN 2 AND 20)
      ORDER BY (SELECT count(*) FROM invocations j WHERE j.runtime_id = i.runtime_id AND j.task_id = i.task_id) DESC, i.attempt_count DESC`);
  const unknown = await pick(`i.status = 'outcome_unknown' AND i.effect_class = 'money' ORDER BY i.attempt_count DESC`);
  const stalled = await pick(`i.status = 'pending' AND i.stall_at < now() ORDER BY i.stall_at`);
  await db.end();
  expect(story && unknown && stalled).toBeTruthy();

  await signIn(page, base, people.ana, password);
  await page.goto(invocationUrl(story!.invocation_id));
  await expect(page.getByRole("list", { name: "Timeline, oldest first" })).toContainText("retry of attempt");
  await page.screenshot({ path: `${OUT_DIR}/screenshots/invocation-timeline.png`, fullPage: true });

  await page.goto(`${base}/tasks/${encodeURIComponent(story!.task_id)}?runtime=billing-agent`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(story!.task_id);
  await page.screenshot({ path: `${OUT_DIR}/screenshots/task-timeline.png`, fullPage: true });

  await page.goto(invocationUrl(unknown!.invocation_id));
  await page.keyboard.press("v");
  await page
    .getByRole("dialog")
    .getByLabel("Note (optional)")
    .fill("Asked the runtime to look the charge up by its idempotency key.");
  await page.getByRole("dialog").getByRole("button", { name: "Request verification" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Verifying");
  await page.screenshot({ path: `${OUT_DIR}/screenshots/invocation-verifying.png`, fullPage: true });

  await page.goto(invocationUrl(stalled!.invocation_id));
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Stalled");
  await page.screenshot({ path: `${OUT_DIR}/screenshots/invocation-stalled.png`, fullPage: true });
});

test("a long task: the page lists the first 50 (those that need a person first), loads the rest and more of the story on demand", async ({
  page,
  request,
}) => {
  const taskId = `long-${run}`;
  const t0 = Date.now() - 3_600_000;
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const records = Array.from({ length: 60 }, (_, n) => {
    const r = {
      task_id: taskId,
      invocation_id: `${taskId}-${String(n).padStart(2, "0")}`,
      tool: n % 2 ? "send_email" : "create_order",
      effect_class: "create",
    };
    const e = (k: string) => `${r.invocation_id}-${k}`;
    // Three of them time out (outcome unknown: they need a person); the rest are retried once and commit.
    if (n % 20 === 5)
      return [
        { ...r, event_id: e("i1"), attempt: 1, phase: "intent", at: at(n * 30) },
        {
          ...r,
          event_id: e("o1"),
          attempt: 1,
          at: at(n * 30 + 5),
          envelope: { ok: false, commit_state: "unknown", code: "TIMEOUT", next_action: "verify_operation" },
        },
      ];
    return [
      { ...r, event_id: e("i1"), attempt: 1, phase: "intent", at: at(n * 30) },
      {
        ...r,
        event_id: e("o1"),
        attempt: 1,
        at: at(n * 30 + 2),
        envelope: { ok: false, commit_state: "not_committed", code: "RATE_LIMITED", next_action: "retry" },
      },
      { ...r, event_id: e("i2"), attempt: 2, phase: "intent", at: at(n * 30 + 10) },
      { ...r, event_id: e("o2"), attempt: 2, at: at(n * 30 + 12), envelope: { ok: true, commit_state: "committed" } },
    ];
  });
  await ingest(request, records.flat());

  await signIn(page, base, people.ana, password);
  await page.goto(`${base}/tasks/${taskId}?runtime=billing-agent`);
  const list = page.getByRole("region", { name: /Invocations/ });
  await expect(list.locator("tbody tr")).toHaveCount(50);
  await expect(list.locator("tbody tr").first()).toContainText("Outcome unknown");
  await expect(page.getByText("3 need a person")).toBeVisible();
  await expect(page.locator(".tl-mark").first()).toBeVisible();
  expect(await page.locator("figure .h-11 .relative.h-10").count()).toBe(50);
  const story = page.getByRole("list", { name: "Timeline, oldest first" });
  await expect(story.locator(":scope > li")).toHaveCount(150);
  await page.screenshot({ path: `${OUT_DIR}/screenshots/task-long.png`, fullPage: true });

  // Live: a probe settles one that needed a person; the list and the chart the server drew follow.
  const settled = `${taskId}-05`;
  await ingest(request, [
    {
      task_id: taskId,
      invocation_id: settled,
      tool: "send_email",
      effect_class: "create",
      event_id: `${settled}-p1`,
      attempt: 1,
      phase: "probe",
      at: new Date().toISOString(),
      envelope: { ok: true, commit_state: "committed" },
    },
  ]);
  await expect(page.getByText("2 need a person")).toBeVisible({ timeout: 10_000 });
  await expect(page.locator(`figure a[href*="${settled}"]`)).not.toContainText("Outcome unknown", { timeout: 10_000 });

  await list.getByRole("button", { name: "Show 10 more" }).focus();
  await page.keyboard.press("Enter");
  await expect(list.locator("tbody tr")).toHaveCount(60);
  const more = page.getByRole("button", { name: /^Show \d+ more$/ }).last();
  await more.click();
  await expect(story.locator(":scope > li")).not.toHaveCount(150);
  expect(await story.locator(":scope > li").count()).toBeGreaterThan(150);
});

test("an id two runtimes use asks which one; an id nobody reported is a clear not-found page", async ({
  page,
  request,
}) => {
  const otherKey = settleCli(state.databaseUrl, ["keys", "create", `other-agent-${run}`]);
  const id = `shared-${run}`;
  const record = (tool: string) => ({
    event_id: `${id}-${tool}`,
    task_id: `task-${id}`,
    invocation_id: id,
    tool,
    at: new Date().toISOString(),
    envelope: { ok: true, commit_state: "committed" },
  });
  await ingest(request, [record("billing_tool")]);
  const res = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${otherKey}` },
    data: record("other_tool"),
  });
  expect(res.status()).toBe(207);

  await signIn(page, base, people.vi, password);
  await page.goto(`${base}/invocations/${id}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Which runtime’s invocation?");
  await page.getByRole("link", { name: `other-agent-${run}` }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("other_tool");
  await page
    .getByRole("link", { name: `task-${id}` })
    .first()
    .click();
  await expect(page.getByRole("region", { name: "Invocations" })).toContainText("other_tool");
  await expect(page.getByRole("region", { name: "Invocations" })).not.toContainText("billing_tool");

  const missing = await page.goto(`${base}/invocations/${encodeURIComponent(`never reported ${run}`)}`);
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("No such invocation");
  await expect(page.getByText(`never reported ${run}`)).toBeVisible();
  expect((await page.goto(`${base}/tasks/nothing-${run}?runtime=billing-agent`))?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("No such task");
});
