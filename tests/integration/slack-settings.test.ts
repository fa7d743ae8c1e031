import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as settingsRoute from "@/app/api/v1/admin/integrations/slack/route";
import * as linksRoute from "@/app/api/v1/admin/slack-links/route";
import * as linkRoute from "@/app/api/v1/admin/slack-links/[slack_user_id]/route";
import { loadSlackApp } from "@/lib/slack/settings";
import { call, createOperator, openSettle, type TestContext } from "./harness";

// The Slack app's settings and links: admins only, secrets in and never out (stored sealed), every change audited.

describe("Slack settings and links", () => {
  let t: TestContext;
  let admin: Awaited<ReturnType<typeof createOperator>>;
  let operator: Awaited<ReturnType<typeof createOperator>>;
  const path = "/api/v1/admin/integrations/slack";

  beforeAll(async () => {
    t = await openSettle("postgres", {
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_PUBLIC_URL: "https://settle.example.com",
    });
    admin = await createOperator(t.db, "admin");
    operator = await createOperator(t.db, "operator");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("answers the defaults before it is set up, and refuses a first PUT without both secrets", async () => {
    const before = await call(settingsRoute.GET, { key: admin.token, path });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({
      configured: false,
      signing_secret_set: false,
      signing_secret_changed_at: null,
      bot_token_set: false,
      bot_token_changed_at: null,
      interactivity_url: "https://settle.example.com/api/v1/integrations/slack/interactions",
      api_base_url: "https://slack.com/api",
      actions: { money: ["record", "escalate"], send: ["approve", "reject", "record", "escalate"] },
    });
    const half = await call(settingsRoute.PUT, {
      key: admin.token,
      path,
      method: "PUT",
      body: { signing_secret: "s3cr3t-signing" },
    });
    expect(half.status).toBe(400);
    const forbidden = await call(settingsRoute.PUT, {
      key: operator.token,
      path,
      method: "PUT",
      body: { signing_secret: "s3cr3t-signing", bot_token: "xoxb-1-2-3" },
    });
    expect(forbidden.status).toBe(403);
  });

  it("keeps the secrets sealed, never answers them, keeps them when left out, audits without them", async () => {
    const put = await call(settingsRoute.PUT, {
      key: admin.token,
      path,
      method: "PUT",
      body: {
        signing_secret: "8f742231b10e8888abcd99yyyzzz85a5",
        bot_token: "xoxb-111-222-abcdefghij",
        api_base_url: "http://127.0.0.1:9/api/",
        actions: { money: ["approve", "record"] },
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.configured).toBe(true);
    expect(put.body.api_base_url).toBe("http://127.0.0.1:9/api");
    expect(put.body.actions.money).toEqual(["approve", "record"]);
    expect(put.body.actions.send).toEqual(["approve", "reject", "record", "escalate"]);
    expect(JSON.stringify(put.body)).not.toContain("xoxb-111");

    const [row] = await t.db.driver.query<{ signing_secret: string; bot_token: string }>(
      `SELECT signing_secret, bot_token FROM slack_settings`,
    );
    expect(row!.bot_token).not.toContain("xoxb");
    expect(row!.signing_secret).not.toContain("8f742231");

    const policyOnly = await call(settingsRoute.PUT, {
      key: admin.token,
      path,
      method: "PUT",
      body: { actions: { read: [] } },
    });
    expect(policyOnly.status).toBe(200);
    const app = await loadSlackApp(t.db);
    expect(app).toMatchObject({
      signingSecret: "8f742231b10e8888abcd99yyyzzz85a5",
      botToken: "xoxb-111-222-abcdefghij",
    });
    expect(app!.actions.read).toEqual([]);

    const audit = await t.db.driver.query<{ before: unknown; after: unknown }>(
      `SELECT before, after FROM admin_actions WHERE action = 'slack_settings_changed' ORDER BY at`,
    );
    expect(audit).toHaveLength(2);
    expect(JSON.stringify(audit)).not.toMatch(/xoxb|8f742231/);
    expect(audit[0]!.after).toMatchObject({ replaced: ["signing secret", "bot token"] });
  });

  it("says whether each secret is set and when it was last replaced, moving only the one sent", async () => {
    const first = await call(settingsRoute.GET, { key: admin.token, path });
    expect(first.body).toMatchObject({ signing_secret_set: true, bot_token_set: true });
    const signingAt = first.body.signing_secret_changed_at as string;
    const tokenAt = first.body.bot_token_changed_at as string;
    expect(Date.parse(signingAt)).toBeGreaterThan(0);
    expect(Date.parse(tokenAt)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const tokenOnly = await call(settingsRoute.PUT, {
      key: admin.token,
      path,
      method: "PUT",
      body: { bot_token: "xoxb-333-444-klmnopqrst" },
    });
    expect(tokenOnly.status).toBe(200);
    expect(tokenOnly.body.signing_secret_changed_at).toBe(signingAt);
    expect(Date.parse(tokenOnly.body.bot_token_changed_at)).toBeGreaterThan(Date.parse(tokenAt));
    expect(JSON.stringify(tokenOnly.body)).not.toContain("xoxb-333");
  });

  it("links: admins add, list and remove; an unknown person or a malformed id is refused", async () => {
    const add = await call(linksRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/slack-links",
      body: { email: operator.user.email, slack_user_id: "U0123ABCD" },
    });
    expect(add.status, JSON.stringify(add.body)).toBe(201);
    expect(add.body).toMatchObject({
      slack_user_id: "U0123ABCD",
      email: operator.user.email,
      role: "operator",
      active: true,
    });
    const nobody = await call(linksRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/slack-links",
      body: { email: "nobody@example.com", slack_user_id: "U0123ABCE" },
    });
    expect(nobody.status).toBe(404);
    const malformed = await call(linksRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/slack-links",
      body: { email: operator.user.email, slack_user_id: "not an id" },
    });
    expect(malformed.status).toBe(400);
    const byOperator = await call(linksRoute.GET, { key: operator.token, path: "/api/v1/admin/slack-links" });
    expect(byOperator.status).toBe(403);
    const list = await call(linksRoute.GET, { key: admin.token, path: "/api/v1/admin/slack-links" });
    expect(list.body.items.map((l: { slack_user_id: string }) => l.slack_user_id)).toEqual(["U0123ABCD"]);

    const del = await call(linkRoute.DELETE, {
      key: admin.token,
      method: "DELETE",
      path: "/api/v1/admin/slack-links/U0123ABCD",
      params: { slack_user_id: "U0123ABCD" },
    });
    expect(del.status).toBe(200);
    const again = await call(linkRoute.DELETE, {
      key: admin.token,
      method: "DELETE",
      path: "/api/v1/admin/slack-links/U0123ABCD",
      params: { slack_user_id: "U0123ABCD" },
    });
    expect(again.status).toBe(404);
    const actions = await t.db.driver.query<{ action: string }>(
      `SELECT action FROM admin_actions WHERE target_type = 'slack_link' ORDER BY at`,
    );
    expect(actions.map((a) => a.action)).toEqual(["slack_link_added", "slack_link_removed"]);
  });
});
