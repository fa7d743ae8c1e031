import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { OUT_DIR, readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// Screenshots of the audit and admin pages at realistic data, to look at and
// for the README: `SETTLE_SCREENSHOTS=1 npx playwright test e2e/admin-screenshots.spec.ts`.
// Off by default: it plays 200 simulated tasks into the shared console server.

const state = readState().console;
const base = state.baseURL;
const shot = (name: string) => path.join(OUT_DIR, "screenshots", `${name}.png`);

type Summary = { invocation_id: string; runtime: string; version: number; status: string };

test.skip(!process.env.SETTLE_SCREENSHOTS, "set SETTLE_SCREENSHOTS=1 to take the screenshots");
test.setTimeout(240_000);

function person(email: string, role: "operator" | "manager", name: string) {
  const exists = spawnSync(
    process.execPath,
    [
      "bin/settle.mjs",
      "users",
      "create",
      "--email",
      email,
      "--role",
      role,
      "--name",
      name,
      "--password",
      "screenshot password",
    ],
    {
      env: { ...process.env, DATABASE_URL: state.databaseUrl },
      encoding: "utf8",
    },
  );
  if (exists.status !== 0 && !exists.stderr.includes("already exists")) throw new Error(exists.stderr);
  return settleCli(state.databaseUrl, ["tokens", "create", "--email", email, "--name", "reconcile-script"]);
}

async function act(request: APIRequestContext, token: string, inv: Summary, body: Record<string, unknown>) {
  const res = await request.post(`${base}/api/v1/invocations/${encodeURIComponent(inv.invocation_id)}/actions`, {
    headers: { authorization: `Bearer ${token}` },
    data: { ...body, version: inv.version, runtime: inv.runtime },
  });
  expect(res.status(), await res.text()).toBe(200);
  const after = (await res.json()) as Summary;
  inv.version = after.version;
  inv.status = after.status;
}

test("audit trail and admin pages at realistic data", async ({ page, request }) => {
  const run = spawnSync(
    process.execPath,
    ["bin/settle.mjs", "simulate", "--url", base, "--key", state.key, "--tasks", "200", "--seed", "7"],
    { encoding: "utf8" },
  );
  expect(run.stdout).toMatch(/passed/);
  settleCli(state.databaseUrl, ["keys", "create", "support-bot", "--name", "prod-eu-1"]);
  settleCli(state.databaseUrl, ["keys", "create", "billing-agent", "--name", "staging"]);

  const ana = person("ana.lopez@acme.example", "operator", "Ana López");
  const bo = person("bo.chen@acme.example", "operator", "Bo Chen");
  const cy = person("cy.okafor@acme.example", "manager", "Cy Okafor");

  const list = await request.get(
    `${base}/api/v1/invocations?status=outcome_unknown,stalled,partially_applied&limit=30`,
    { headers: { authorization: `Bearer ${ana}` } },
  );
  const open = ((await list.json()) as { items: Summary[] }).items;
  expect(open.length).toBeGreaterThanOrEqual(10);
  const [a, b, c, d, e, f, g, h] = open;

  await act(request, ana, a!, { action: "assign", assignee: "ana.lopez@acme.example" });
  await act(request, ana, a!, {
    action: "request_verification",
    note: "Asking the runtime to probe before anyone touches it.",
  });
  await act(request, ana, a!, {
    action: "record_verification",
    result: "found",
    evidence: "Stripe dashboard: charge ch_3PZk2L exists, amount and customer match.",
  });
  await act(request, bo, b!, { action: "request_verification" });
  await act(request, bo, b!, {
    action: "record_verification",
    result: "absent",
    evidence: "No invoice with this idempotency key in Xero; a retry with the same key is safe.",
  });
  await act(request, bo, c!, {
    action: "record_verification",
    result: "inconclusive",
    evidence: "Provider API returns 503 for lookups too; will check again in an hour.",
  });
  await act(request, bo, c!, {
    action: "escalate",
    note: "Provider outage, finance must decide whether to call the customer.",
  });
  await act(request, ana, d!, {
    action: "mark_reconciled",
    commit_state: "committed",
    note: "Customer confirmed by phone that the email arrived (ticket #88213).",
  });
  await act(request, cy, e!, {
    action: "comment",
    note: "Seen twice this week on the same tool, raising it with the platform team.",
  });
  await act(request, cy, e!, { action: "assign", assignee: "bo.chen@acme.example" });
  await act(request, bo, f!, {
    action: "mark_reconciled",
    commit_state: "not_committed",
    note: "Bank statement for 29 Nov shows no debit; cleared for retry with the same key.",
  });
  await act(request, ana, g!, {
    action: "escalate",
    note: "Destructive action on a production table, needs a manager.",
  });
  await act(request, cy, h!, { action: "comment", note: "=SUM(A1:A3) pasted by a customer, stored as text" });

  await signIn(page, base, state.adminEmail, state.adminPassword, "/audit");
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  await page.screenshot({ path: shot("audit"), fullPage: true });
  await page.goto(`${base}/audit?actor=bo.chen&to_status=reconciled`);
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  await page.screenshot({ path: shot("audit-filtered") });

  await page.goto(`${base}/admin/users`);
  await expect(page.getByTestId("user-row").first()).toBeVisible();
  await page.screenshot({ path: shot("admin-users"), fullPage: true });
  await page.getByRole("button", { name: "Add person" }).click();
  await page.getByRole("dialog").getByLabel("Email").fill("dee.novak@acme.example");
  await page.screenshot({ path: shot("admin-users-add") });
  await page.getByRole("dialog").getByRole("button", { name: "Add person" }).click();
  await expect(page.getByRole("dialog", { name: /Password for/ })).toBeVisible();
  await page.screenshot({ path: shot("admin-users-password") });
  await page.getByRole("button", { name: "I have copied it" }).click();

  await page.goto(`${base}/admin/keys`);
  await expect(page.getByTestId("key-row").first()).toBeVisible();
  await page.screenshot({ path: shot("admin-keys"), fullPage: true });
  await page.getByRole("button", { name: "Create key" }).click();
  await page.getByRole("dialog").getByLabel("Runtime").fill("support-bot");
  await page.getByRole("dialog").getByLabel("Key name").fill("prod-us-1");
  await page.getByRole("dialog").getByRole("button", { name: "Create key" }).click();
  await expect(page.getByRole("dialog", { name: /Key for runtime/ })).toBeVisible();
  await page.screenshot({ path: shot("admin-keys-created") });
  await page.getByRole("button", { name: "I have copied it" }).click();
  const first = page.getByTestId("key-row").first();
  await first.getByRole("button", { name: /Revoke/ }).click();
  await page.screenshot({ path: shot("admin-keys-revoke") });
  await page.getByRole("button", { name: "Cancel" }).click();

  await page.goto(`${base}/account/tokens`);
  await page.getByLabel("New token name").fill("nightly-reconcile");
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await page.screenshot({ path: shot("account-tokens-created") });
  await page.getByRole("button", { name: "I have copied it" }).click();
  await page.screenshot({ path: shot("account-tokens"), fullPage: true });
});
