import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as channelsRoute from "@/app/api/v1/admin/notifications/route";
import * as mySlackLinks from "@/app/api/v1/me/slack-links/route";
import { POST as confirmSlackLink } from "@/app/api/v1/me/slack-links/confirm/route";
import { DELETE as removeMySlackLink } from "@/app/api/v1/me/slack-links/[slack_user_id]/route";
import { addSlackLink } from "@/lib/slack/links";
import { POST as actionsRoute } from "@/app/api/v1/invocations/[invocation_id]/actions/route";
import { webhookJob } from "@/lib/jobs/webhooks";
import { setSlackSettings } from "@/lib/slack/settings";
import { ACTION_IDS } from "@/lib/slack/blocks";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";
import { startSlackReceiver, type SlackReceiver } from "./slack-receiver";

// A slack_app channel: an approval request or an unknown is one chat.postMessage per call with its buttons, and
// after a decision made anywhere (here: in the console) the message is rewritten with chat.update.

describe("slack_app notification channel", () => {
  let t: TestContext;
  let slack: SlackReceiver;
  let admin: Awaited<ReturnType<typeof createOperator>>;
  let operator: Awaited<ReturnType<typeof createOperator>>;
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;

  beforeAll(async () => {
    t = await openSettle("postgres", {
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_PUBLIC_URL: "https://settle.example.com",
    });
    slack = await startSlackReceiver();
    admin = await createOperator(t.db, "admin");
    operator = await createOperator(t.db, "operator");
    await setSlackSettings(
      t.db,
      {
        signing_secret: "8f742231b10e8888abcd99yyyzzz85a5",
        bot_token: "xoxb-1-2-test",
        api_base_url: slack.url("/api"),
      },
      admin.user.email,
    );
  });
  afterAll(async () => {
    await slack?.close();
    await t?.teardown();
  });

  it("posts one message per call with its buttons, then rewrites it after a console decision", async () => {
    const created = await call(channelsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/notifications",
      body: { kind: "slack_app", channel: "C0123ABC", digest_s: 0 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.channel).toMatchObject({ kind: "slack_app", channel: "C0123ABC", url: null });
    const bad = await call(channelsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/notifications",
      body: { kind: "slack_app", channel: "#general" },
    });
    expect(bad.status).toBe(400);

    const at = new Date(Date.now() - 5_000).toISOString();
    const rec = (id: string, envelope: object) => ({
      event_id: `${id}-e`,
      task_id: `task-${id}`,
      invocation_id: id,
      attempt: 1,
      tool: "create_ticket",
      effect_class: "create",
      idempotency_key: `k-${id}`,
      arguments: { title: "Refund", password: "hunter2hunter2" },
      at,
      envelope,
    });
    const approval = {
      ok: false,
      commit_state: "not_committed",
      next_action: "request_approval",
      code: "APPROVAL_REQUIRED",
      category: "authorization",
    };
    const sent = await call(ingest, {
      key: t.key,
      body: { records: [rec("ch-approve", approval), rec("ch-unknown", { title: "Gateway Timeout", status: 504 })] },
    });
    expect(sent.body.accepted).toBe(2);

    await webhookJob.run(t.db, new Date());
    const posts = slack.to("/api/chat.postMessage");
    expect(posts).toHaveLength(2);
    expect(posts.every((p) => p.authorization === "Bearer xoxb-1-2-test" && p.body.channel === "C0123ABC")).toBe(true);
    const approvalPost = JSON.stringify(posts.find((p) => JSON.stringify(p.body).includes("ch-approve"))!.body);
    expect(approvalPost).toContain(ACTION_IDS.approve);
    expect(approvalPost).not.toContain("hunter2hunter2");
    const unknownPost = JSON.stringify(posts.find((p) => JSON.stringify(p.body).includes("ch-unknown"))!.body);
    expect(unknownPost).toContain(ACTION_IDS.found);
    expect(unknownPost).toContain(ACTION_IDS.not_found);
    const kept = await t.db.driver.query<{ ts: string | null }>(`SELECT ts FROM slack_messages ORDER BY ts`);
    expect(kept.map((k) => k.ts)).toEqual([
      expect.stringMatching(/^1700000000\./),
      expect.stringMatching(/^1700000000\./),
    ]);

    // Nothing moved: a second run redraws nothing.
    await webhookJob.run(t.db, new Date());
    expect(slack.to("/api/chat.update")).toHaveLength(0);

    const inv = await read("ch-approve");
    const approved = await call(actionsRoute, {
      key: operator.token,
      path: "/api/v1/invocations/ch-approve/actions",
      params: { invocation_id: "ch-approve" },
      body: { action: "approve", version: inv.version },
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await webhookJob.run(t.db, new Date());
    const updates = slack.to("/api/chat.update");
    expect(updates).toHaveLength(1);
    const approveTs = posts.find((p) => JSON.stringify(p.body).includes("ch-approve"));
    expect(updates[0]!.body.channel).toBe("C0123ABC");
    expect(typeof updates[0]!.body.ts).toBe("string");
    expect(approveTs).toBeDefined();
    const text = JSON.stringify(updates[0]!.body);
    expect(text).toContain(`Approved by ${operator.user.email}`);
    expect(text).not.toContain(ACTION_IDS.approve);
    await webhookJob.run(t.db, new Date());
    expect(slack.to("/api/chat.update")).toHaveLength(1);
  });

  it("a person links their own Slack user with the code the bot posts them: one guess, then it is gone", async () => {
    const path = "/api/v1/me/slack-links";
    const start = () => call(mySlackLinks.POST, { key: operator.token, path, body: { slack_user_id: "UOPERATOR1" } });
    expect((await start()).status).toBe(200);
    const dm = slack.to("/api/chat.postMessage").at(-1)!;
    expect(dm.body.channel).toBe("UOPERATOR1");
    const code = /code is (\d{8})/.exec(String(dm.body.text))![1]!;
    const wrong = code === "00000000" ? "11111111" : "00000000";
    const confirm = (c: string) =>
      call(confirmSlackLink, { key: operator.token, path: `${path}/confirm`, body: { code: c } });
    expect((await confirm(wrong)).status).toBe(400);
    // The wrong guess ended that code: the right one no longer works either.
    expect((await confirm(code)).status).toBe(400);

    expect((await start()).status).toBe(200);
    const second = /code is (\d{8})/.exec(String(slack.to("/api/chat.postMessage").at(-1)!.body.text))![1]!;
    const linked = await confirm(second);
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body).toEqual({ linked: "UOPERATOR1" });
    const mine = await call(mySlackLinks.GET, { key: operator.token, path });
    expect(mine.body.items).toEqual([
      expect.objectContaining({ slack_user_id: "UOPERATOR1", email: operator.user.email }),
    ]);
    const stored = await t.db.driver.query(`SELECT * FROM slack_link_codes`);
    expect(stored).toEqual([]);
  });

  it("a person removes their own link, and only their own; the admin audit says who", async () => {
    const path = "/api/v1/me/slack-links";
    await addSlackLink(t.db, { email: operator.user.email, slack_user_id: "UMINE0001" }, admin.user.email);
    await addSlackLink(t.db, { email: admin.user.email, slack_user_id: "UADMIN001" }, admin.user.email);
    const remove = (key: string, id: string) =>
      call(removeMySlackLink, { key, path: `${path}/${id}`, params: { slack_user_id: id } });

    // Someone else's link is not theirs to remove: not found, and it stays.
    const others = await remove(operator.token, "UADMIN001");
    expect(others.status).toBe(404);
    expect(others.body.code).toBe("NOT_FOUND");
    expect(others.body.agent_message).toBe("UADMIN001 is not linked to you.");
    expect(await t.db.driver.query(`SELECT 1 FROM slack_links WHERE slack_user_id = 'UADMIN001'`)).toHaveLength(1);

    const mine = await remove(operator.token, "UMINE0001");
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body).toEqual({ deleted: true });
    const left = await call(mySlackLinks.GET, { key: operator.token, path });
    expect(left.body.items.map((l: { slack_user_id: string }) => l.slack_user_id)).not.toContain("UMINE0001");
    const audit = await t.db.driver.query<{ actor: string; before: unknown }>(
      `SELECT actor, before FROM admin_actions WHERE action = 'slack_link_removed' AND target_id = 'UMINE0001'`,
    );
    expect(audit).toEqual([{ actor: operator.user.email, before: { email: operator.user.email } }]);
    // Gone is gone: a second removal is not found.
    expect((await remove(operator.token, "UMINE0001")).status).toBe(404);
  });
});
