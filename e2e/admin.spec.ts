import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, request as playwrightRequest, test, type APIRequestContext } from "@playwright/test";
import { readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// Admin pages, personal tokens and the audit trail on the console server
// (PostgreSQL). Every name is unique, so other specs on this server are unaffected.

const state = readState().console;
const base = state.baseURL;
const unique = () => randomBytes(4).toString("hex");

/** A person added through the admin API (quicker than the CLI), signed in by nobody yet. */
async function addPerson(role: "viewer" | "operator") {
  const admin = await playwrightRequest.newContext({ baseURL: base, extraHTTPHeaders: { origin: base } });
  const signedIn = await admin.post("/api/auth/sign-in/email", {
    data: { email: state.adminEmail, password: state.adminPassword },
  });
  expect(signedIn.status()).toBe(200);
  const email = `${role}-${unique()}@example.com`;
  const password = "e2e person password";
  expect((await admin.post("/api/v1/admin/users", { data: { email, role, password } })).status()).toBe(201);
  await admin.dispose();
  return { email, password };
}

/** An unknown money write, for the audit test to act on. */
async function ingestUnknown(request: APIRequestContext, key: string, invocationId: string) {
  return request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${key}` },
    data: {
      event_id: `${invocationId}-o1`,
      task_id: `task-${invocationId}`,
      invocation_id: invocationId,
      attempt: 1,
      tool: "charge_card",
      effect_class: "money",
      envelope: { title: "Gateway Timeout", status: 504 },
    },
  });
}

// A settled read: proves a key works without leaving an unknown in the shared server's queue.
async function ingestRead(request: APIRequestContext, key: string) {
  const id = `inv-${unique()}`;
  return request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${key}` },
    data: {
      event_id: `${id}-o1`,
      task_id: `task-${id}`,
      invocation_id: id,
      tool: "get_price",
      effect_class: "read",
      envelope: { outcome: "ok", effect_applied: "yes" },
    },
  });
}

test("an admin adds an operator with a generated password shown once; the operator signs in with it, until deactivated", async ({
  page,
  browser,
}) => {
  const email = `ana-${unique()}@example.com`;
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/users");
  await expect(page.getByRole("heading", { name: "Users" })).toBeVisible();

  await page.getByRole("button", { name: "Add person" }).click();
  const form = page.getByRole("dialog", { name: "Add a person" });
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Role").selectOption("operator");
  await form.getByRole("button", { name: "Add person" }).click();

  const shown = page.getByRole("dialog", { name: `Password for ${email}` });
  await expect(shown).toContainText("shown only this once");
  const password = await shown.getByLabel("Generated password").inputValue();
  expect(password.length).toBeGreaterThanOrEqual(12);
  await shown.getByRole("button", { name: "I have copied it" }).click();
  await expect(page.getByRole("dialog")).toHaveCount(0);

  const row = page.getByTestId("user-row").filter({ hasText: email });
  await expect(row).toContainText("operator");
  await expect(row).toContainText("Active");
  await page.reload();
  await expect(row).toBeVisible();
  expect(await page.content()).not.toContain(password);

  const second = await browser.newContext();
  const theirs = await second.newPage();
  await signIn(theirs, base, email, password);
  await expect(theirs.getByText(email)).toBeVisible();

  await row.getByRole("button", { name: `Deactivate ${email}` }).click();
  await page
    .getByRole("dialog", { name: `Deactivate ${email}?` })
    .getByRole("button", { name: "Deactivate" })
    .click();
  await expect(row).toContainText("Deactivated");
  // Their open queue notices the ended session by itself and goes to sign-in,
  // which may cut this navigation short: either way they end up signed out.
  await theirs.goto(`${base}/audit`).catch((error: Error) => {
    if (!/ERR_ABORTED|interrupted by another navigation/.test(error.message)) throw error;
  });
  await expect(theirs).toHaveURL(/\/sign-in\?next=/);
  await second.close();
});

test("an admin cannot demote or deactivate themselves: the page says so, and the API refuses", async ({ page }) => {
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/users");
  const mine = page.getByTestId("user-row").filter({ hasText: state.adminEmail });
  await expect(mine).toContainText("You cannot change your own role or deactivate yourself.");
  await expect(mine.getByRole("button")).toHaveCount(0);
  const me = (await (await page.request.get(`${base}/api/v1/admin/users`)).json()).items.find(
    (u: { email: string }) => u.email === state.adminEmail,
  );
  const res = await page.request.patch(`${base}/api/v1/admin/users/${me.id}`, {
    data: { role: "viewer" },
    headers: { origin: base },
  });
  expect(res.status()).toBe(403);
  expect((await res.json()).safe_details).toEqual({ rule: "self" });
});

test("an admin creates a runtime key and sees it once with a curl example, then revokes it: ingest with it gets 401", async ({
  page,
  request,
}) => {
  const runtime = `e2e-rt-${unique()}`;
  await signIn(page, base, state.adminEmail, state.adminPassword, "/admin/keys");
  await page.getByRole("button", { name: "Create key" }).click();
  const form = page.getByRole("dialog", { name: "Create a runtime key" });
  await form.getByLabel("Runtime").fill(runtime);
  await form.getByLabel("Key name").fill("e2e host");
  await form.getByRole("button", { name: "Create key" }).click();

  const shown = page.getByRole("dialog", { name: `Key for runtime ${runtime}` });
  await expect(shown).toContainText("shown only this once");
  const key = await shown.getByLabel("Runtime ingest key").inputValue();
  expect(key).toMatch(/^stl_rk_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
  await expect(shown.locator("pre")).toContainText(`curl -sS ${base}/api/v1/envelopes`);
  await expect(shown.locator("pre")).toContainText(`Authorization: Bearer ${key}`);
  await shown.getByRole("button", { name: "I have copied it" }).click();

  expect((await ingestRead(request, key)).status()).toBe(207);
  const prefix = key.slice(0, "stl_rk_".length + 8);
  await page.reload();
  expect(await page.content()).not.toContain(key);
  const row = page.getByTestId("key-row").filter({ hasText: prefix });
  await expect(row).toContainText(runtime);
  await expect(row).toContainText("Active");

  await row.getByRole("button", { name: `Revoke ${prefix}` }).click();
  const confirm = page.getByRole("dialog", { name: `Revoke ${prefix}?` });
  await expect(confirm).toContainText("401 KEY_REVOKED");
  await confirm.getByRole("button", { name: "Revoke key" }).click();
  await expect(row).toContainText("Revoked");
  const refused = await ingestRead(request, key);
  expect(refused.status()).toBe(401);
  expect((await refused.json()).code).toBe("KEY_REVOKED");
});

test("a viewer cannot open the admin pages, and the admin API refuses them by session and by token", async ({
  page,
  request,
}) => {
  const viewer = await addPerson("viewer");
  await signIn(page, base, viewer.email, viewer.password);
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" })).toHaveCount(0);
  const token = (
    await (
      await page.request.post(`${base}/api/v1/me/tokens`, {
        data: { name: "viewer script" },
        headers: { origin: base },
      })
    ).json()
  ).token;
  for (const path of ["/admin/users", "/admin/keys"]) {
    await page.goto(`${base}${path}`);
    await expect(page.getByRole("heading", { name: "Not allowed" })).toBeVisible();
    await expect(page.getByRole("alert").filter({ hasText: "Not allowed" })).toContainText("Your role is viewer");
    await expect(page.getByRole("table")).toHaveCount(0);
  }
  const bySession = await page.request.post(`${base}/api/v1/admin/users`, {
    data: { email: `x-${unique()}@example.com`, role: "admin" },
    headers: { origin: base },
  });
  expect(bySession.status()).toBe(403);
  for (const path of ["/api/v1/admin/users", "/api/v1/admin/runtime-keys"]) {
    const byToken = await request.get(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(byToken.status()).toBe(403);
    expect(await byToken.json()).toMatchObject({ ok: false, code: "FORBIDDEN" });
  }
});

test("a person creates a personal access token, shown once, that works from a script; revoking it stops it", async ({
  page,
  request,
}) => {
  const viewer = await addPerson("viewer");
  await signIn(page, base, viewer.email, viewer.password, "/account/tokens");
  // Keyboard only: type the name, Enter creates; the secret is focused and selected; Escape closes.
  await page.getByLabel("New token name").focus();
  await page.keyboard.type("cron job");
  await page.keyboard.press("Enter");
  const shown = page.getByRole("dialog", { name: "Token cron job" });
  const secret = shown.getByLabel("Personal access token");
  await expect(secret).toBeFocused();
  const token = await secret.inputValue();
  expect(token).toMatch(/^stl_pat_/);
  await expect(shown.locator("pre")).toContainText(`Authorization: Bearer ${token}`);
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  expect(
    (await request.get(`${base}/api/v1/invocations`, { headers: { authorization: `Bearer ${token}` } })).status(),
  ).toBe(200);

  const prefix = token.slice(0, "stl_pat_".length + 8);
  const row = page.getByTestId("token-row").filter({ hasText: prefix });
  await row.getByRole("button", { name: `Revoke ${prefix}` }).click();
  await page
    .getByRole("dialog", { name: `Revoke ${prefix}?` })
    .getByRole("button", { name: "Revoke token" })
    .click();
  await expect(row).toContainText("Revoked");
  expect(
    (await request.get(`${base}/api/v1/invocations`, { headers: { authorization: `Bearer ${token}` } })).status(),
  ).toBe(401);
});

test("the audit page shows an action taken through the API with a CLI-made token, inert, and the CSV export has it", async ({
  page,
  request,
}) => {
  const person = await addPerson("operator");
  const operator = {
    ...person,
    token: settleCli(state.databaseUrl, ["tokens", "create", "--email", person.email, "--name", "e2e"]),
  };
  const invocationId = `inv-audit-${unique()}`;
  expect((await ingestUnknown(request, state.key, invocationId)).status()).toBe(207);
  const auth = { authorization: `Bearer ${operator.token}` };
  const { version } = await (await request.get(`${base}/api/v1/invocations/${invocationId}`, { headers: auth })).json();
  const note = `Asked the PSP, "twice", then waited\n<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
  const acted = await request.post(`${base}/api/v1/invocations/${invocationId}/actions`, {
    headers: auth,
    data: { action: "request_verification", version, note },
  });
  expect(acted.status()).toBe(200);

  await signIn(page, base, state.adminEmail, state.adminPassword, "/audit");
  await page.getByLabel("Task or invocation").fill(invocationId);
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(new RegExp(`/audit\\?q=${invocationId}$`));
  const row = page.getByTestId("audit-row");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(operator.email);
  await expect(row).toContainText("Request verification");
  await expect(row).toContainText("Outcome unknown");
  await expect(row).toContainText("Verifying");
  await expect(row).toContainText('<img src=x onerror="window.__pwned=1">');
  await expect(row.getByRole("link", { name: invocationId, exact: true })).toHaveAttribute(
    "href",
    `/invocations/${invocationId}?runtime=billing-agent`,
  );
  expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
  expect(await page.locator("tbody img").count()).toBe(0);

  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("link", { name: /Export CSV/ }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^settle-audit-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = readFileSync((await download.path())!, "utf8");
  const lines = csv.split("\r\n");
  expect(lines[0]).toBe(
    "time,kind,actor,action,result,commit_state,assignee,from_status,to_status,note,version,runtime,task_id,invocation_id,tool,effect_class,target_type,target_id,before,after,reply,edit",
  );
  expect(csv).toContain(
    `invocation,${operator.email},request_verification,,,,outcome_unknown,verifying,"${note.replaceAll('"', '""')}"`,
  );
  expect(csv).toContain(`billing-agent,task-${invocationId},${invocationId},charge_card,money,,,,,,\r\n`);
  expect(lines.filter((l) => l.includes(invocationId))).toHaveLength(1);
});
