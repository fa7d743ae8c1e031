import { spawnSync } from "node:child_process";
import { expect, request as playwrightRequest, type APIRequestContext, type APIResponse } from "@playwright/test";
import type { Receiver } from "../tests/integration/webhook-receiver";
import { readState, settleCli } from "./server";

// The realistic data the console screenshots are taken at (e2e/console-screenshots.spec.ts): people and their
// tokens, runtimes and keys, catalog entries with verifiers and runbooks, policies, retention, webhook endpoints
// and notification channels that receive (and one that fails), then 200 simulated tasks and people acting on
// some of their invocations, so every list has rows and every log has entries.

const state = readState().console;
const base = state.baseURL;

type Summary = { invocation_id: string; runtime: string; version: number; status: string };

function person(email: string, role: "operator" | "manager" | "viewer", name: string): string {
  const made = spawnSync(
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
    { env: { ...process.env, DATABASE_URL: state.databaseUrl }, encoding: "utf8" },
  );
  if (made.status !== 0 && !made.stderr.includes("already exists")) throw new Error(made.stderr);
  return settleCli(state.databaseUrl, ["tokens", "create", "--email", email, "--name", "reconcile-script"]);
}

async function asAdmin(): Promise<APIRequestContext> {
  const admin = await playwrightRequest.newContext({ baseURL: base, extraHTTPHeaders: { origin: base } });
  const signedIn = await admin.post("/api/auth/sign-in/email", {
    data: { email: state.adminEmail, password: state.adminPassword },
  });
  expect(signedIn.status()).toBe(200);
  return admin;
}

async function ok(answer: Promise<APIResponse>) {
  const res = await answer;
  expect(res.status(), await res.text()).toBeLessThan(300);
  return res;
}

async function act(request: APIRequestContext, token: string, inv: Summary, body: Record<string, unknown>) {
  const res = await ok(
    request.post(`${base}/api/v1/invocations/${encodeURIComponent(inv.invocation_id)}/actions`, {
      headers: { authorization: `Bearer ${token}` },
      data: { ...body, version: inv.version, runtime: inv.runtime },
    }),
  );
  const after = (await res.json()) as Summary;
  inv.version = after.version;
  inv.status = after.status;
}

async function configure(admin: APIRequestContext, receiver: Receiver) {
  for (const [runtime, name] of [
    ["support-bot", "prod-eu-1"],
    ["support-bot", "prod-us-1"],
    ["billing-agent", "staging"],
    ["ops-agent", "prod-eu-1"],
  ])
    settleCli(state.databaseUrl, ["keys", "create", runtime!, "--name", name!]);
  const entries: Array<[string, string, string]> = [
    ["billing-agent", "create_refund", "money"],
    ["billing-agent", "charge_*", "money"],
    ["billing-agent", "send_invoice_email", "send"],
    ["billing-agent", "get_*", "read"],
    ["support-bot", "close_ticket", "destructive"],
    ["support-bot", "reply_*", "send"],
    ["ops-agent", "drop_*", "destructive"],
  ];
  const ids: string[] = [];
  for (const [runtime, pattern, effect_class] of entries) {
    const res = await ok(admin.post("/api/v1/admin/tool-catalog", { data: { runtime, pattern, effect_class } }));
    ids.push(((await res.json()) as { id: string }).id);
  }
  await ok(
    admin.patch(`/api/v1/admin/tool-catalog/${ids[0]}`, {
      data: {
        verify: { after_s: 30, every_s: 60, max_tries: 5, absent_after_s: 120, lease_s: 30 },
        summary: "{{args.amount}} {{args.currency}} to {{args.customer}}",
        runbook_url: "https://dashboard.example.com/refunds?q={{idempotency_key}}",
        runbook: "Search refunds by the key. A refund listed there means it happened.",
        volatile_args: ["request_id", "timestamp"],
      },
    }),
  );
  await ok(
    admin.patch(`/api/v1/admin/tool-catalog/${ids[1]}`, { data: { summary: "{{args.amount}} to {{args.card}}" } }),
  );
  await ok(
    admin.put("/api/v1/policies/money", {
      data: {
        overdue_after_s: 900,
        escalate_after_s: 3600,
        approval_expires_after_s: 14400,
        duplicate_window_s: 86400,
        approval_quorum: 2,
      },
    }),
  );
  await ok(
    admin.put("/api/v1/policies/destructive", {
      data: {
        overdue_after_s: 1800,
        escalate_after_s: 7200,
        approval_expires_after_s: null,
        duplicate_window_s: 3600,
        approval_quorum: 1,
      },
    }),
  );
  await ok(admin.put("/api/v1/retention/runtimes/support-bot", { data: { attempts_days: 30, audit_days: 365 } }));
  // The receiver checks signatures: it learns each path's secret, so its deliveries go through.
  const secretOf = async (path: string, made: Promise<APIResponse>) =>
    receiver.secrets.set(path, ((await (await ok(made)).json()) as { secret: string }).secret);
  await secretOf(
    "/billing",
    admin.post("/api/v1/admin/webhooks", { data: { runtime: "billing-agent", url: receiver.url("/billing") } }),
  );
  await ok(
    admin.post("/api/v1/admin/webhooks", {
      data: { runtime: "billing-agent", url: "http://127.0.0.1:9/settle-events" },
    }),
  );
  await secretOf(
    "/support",
    admin.post("/api/v1/admin/webhooks", { data: { runtime: "support-bot", url: receiver.url("/support") } }),
  );
  await secretOf(
    "/slack-money",
    admin.post("/api/v1/admin/notifications", {
      data: { kind: "slack", url: receiver.url("/slack-money"), effect_classes: ["money"], digest_s: 0 },
    }),
  );
  await secretOf(
    "/slack-oncall",
    admin.post("/api/v1/admin/notifications", {
      data: {
        kind: "slack",
        url: receiver.url("/slack-oncall"),
        runtimes: ["billing-agent"],
        events: ["escalated"],
        digest_s: 300,
      },
    }),
  );
}

/** Everything the screenshots show; returns a task id and an invocation of the queue to open. */
export async function seedConsole(request: APIRequestContext, receiver: Receiver): Promise<Summary> {
  const admin = await asAdmin();
  await configure(admin, receiver);
  await admin.dispose();

  const run = spawnSync(
    process.execPath,
    ["bin/settle.mjs", "simulate", "--url", base, "--key", state.key, "--tasks", "200", "--seed", "7"],
    { encoding: "utf8" },
  );
  expect(run.stdout).toMatch(/passed/);

  const ana = person("ana.lopez@acme.example", "operator", "Ana López");
  const bo = person("bo.chen@acme.example", "operator", "Bo Chen");
  const cy = person("cy.okafor@acme.example", "manager", "Cy Okafor");
  person("dana.reyes@acme.example", "viewer", "Dana Reyes");
  settleCli(state.databaseUrl, ["tokens", "create", "--email", state.adminEmail, "--name", "nightly-export"]);

  const list = await request.get(
    `${base}/api/v1/invocations?status=outcome_unknown,stalled,partially_applied&limit=30`,
    {
      headers: { authorization: `Bearer ${ana}` },
    },
  );
  const open = ((await list.json()) as { items: Summary[] }).items;
  expect(open.length).toBeGreaterThanOrEqual(10);
  const [a, b, c, d, e, f, g, h] = open;
  await act(request, ana, a!, { action: "assign", assignee: "ana.lopez@acme.example" });
  await act(request, ana, a!, { action: "request_verification", note: "Asking the runtime to probe first." });
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
  await act(request, bo, c!, { action: "escalate", note: "Provider outage, finance must decide." });
  await act(request, ana, d!, {
    action: "mark_reconciled",
    commit_state: "committed",
    note: "Customer confirmed by phone that the email arrived (ticket #88213).",
  });
  await act(request, cy, e!, { action: "comment", note: "Seen twice this week on the same tool." });
  await act(request, cy, e!, { action: "assign", assignee: "bo.chen@acme.example" });
  await act(request, bo, f!, {
    action: "mark_reconciled",
    commit_state: "not_committed",
    note: "Bank statement for 29 Nov shows no debit; cleared for retry with the same key.",
  });
  await act(request, ana, g!, { action: "escalate", note: "Destructive action on a production table." });
  return h!;
}
