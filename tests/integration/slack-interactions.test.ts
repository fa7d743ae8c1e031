import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as interactions } from "@/app/api/v1/integrations/slack/interactions/route";
import { putPolicy } from "@/lib/policies/policies";
import { addSlackLink } from "@/lib/slack/links";
import { setSlackSettings } from "@/lib/slack/settings";
import { slackClicksTaken } from "@/lib/slack/interactions";
import { ACTION_IDS } from "@/lib/slack/blocks";
import { RECORD_CALLBACK } from "@/lib/slack/modals";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";
import { slackClient, type Drawn } from "./slack-client";
import { startSlackReceiver, type SlackReceiver } from "./slack-receiver";

// Slack's side simulated from its documentation: signed block_actions and view_submission payloads, form-encoded
// as payload=…, and a local receiver for response_url and the Web API. Each click acts as the linked person
// through the console's own action, or changes nothing and is answered to the person who clicked.

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const PATH = "/api/v1/integrations/slack/interactions";
const approvalEnvelope = {
  ok: false,
  commit_state: "not_committed",
  next_action: "request_approval",
  code: "APPROVAL_REQUIRED",
  category: "authorization",
};
const timeout = { title: "Gateway Timeout", status: 504 };

describe("Slack interactivity", () => {
  let t: TestContext;
  let slack: SlackReceiver;
  const people = {} as Record<"a" | "b" | "viewer", { user: { email: string } }>;

  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const actionRows = (id: string) =>
    t.db.driver.query<{ action: string; actor: string; payload: Record<string, unknown> }>(
      `SELECT a.action, a.actor, a.payload FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid
        WHERE i.invocation_id = $1 ORDER BY a.seq`,
      [id],
    );

  // Signing, posting and drawing clicks as Slack does: the same client the modal tests use.
  let client: ReturnType<typeof slackClient>;
  const signed = (payload: unknown, options?: { at?: number; secret?: string }) => client.signed(payload, options);
  const post = (req: { raw: string; headers: Record<string, string> }) => client.post(req);
  const clickPayload = (user: string, action: keyof typeof ACTION_IDS, view: Drawn) =>
    client.clickPayload(user, action, view);
  const responseTo = (payload: { response_url: string }) => client.responseTo(payload);

  async function click(user: string, action: keyof typeof ACTION_IDS, id: string) {
    const payload = clickPayload(user, action, await read(id));
    const res = await post(signed(payload));
    await slackClicksTaken();
    return { res, payload, answers: responseTo(payload) };
  }

  beforeAll(async () => {
    t = await openSettle("postgres", {
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_PUBLIC_URL: "https://settle.example.com",
    });
    slack = await startSlackReceiver();
    client = slackClient(slack, SECRET);
    await setSlackSettings(
      t.db,
      { signing_secret: SECRET, bot_token: "xoxb-1-2-test", api_base_url: slack.url("/api") },
      "admin@example.com",
    );
    people.a = await createOperator(t.db, "operator");
    people.b = await createOperator(t.db, "manager");
    people.viewer = await createOperator(t.db, "viewer");
    await addSlackLink(t.db, { email: people.a.user.email, slack_user_id: "UAAAA" }, "admin@example.com");
    await addSlackLink(t.db, { email: people.b.user.email, slack_user_id: "UBBBB" }, "admin@example.com");
    await addSlackLink(t.db, { email: people.viewer.user.email, slack_user_id: "UVVVV" }, "admin@example.com");
    await putPolicy(
      t.db,
      "send",
      { overdue_after_s: null, escalate_after_s: null, approval_expires_after_s: null, approval_quorum: 2 },
      "admin@example.com",
    );
    const at = new Date().toISOString();
    const rec = (id: string, tool: string, cls: string, envelope: object) => ({
      event_id: `${id}-e`,
      task_id: `task-${id}`,
      invocation_id: id,
      attempt: 1,
      tool,
      effect_class: cls,
      idempotency_key: `k-${id}`,
      arguments: { to: "cus@example.com", amount: 12, api_key: "sk_live_abcdefghijklmnop" },
      at,
      envelope,
    });
    const res = await call(ingest, {
      key: t.key,
      body: {
        records: [
          rec("ap-create", "create_ticket", "create", approvalEnvelope),
          rec("ap-send", "send_email", "send", approvalEnvelope),
          rec("ap-money", "pay", "money", approvalEnvelope),
          rec("ap-guarded", "create_ticket", "create", approvalEnvelope),
          rec("un-1", "create_ticket", "create", timeout),
        ],
      },
    });
    expect(res.body.accepted).toBe(5);
  });
  afterAll(async () => {
    await slack?.close();
    await t?.teardown();
  });

  it("a valid click approves once, as the linked person, audited via Slack; the message is rewritten to who decided", async () => {
    const before = await read("ap-create");
    expect(before.status).toBe("awaiting_approval");
    const { res, answers } = await click("UAAAA", "approve", "ap-create");
    expect(res.status).toBe(200);
    const after = await read("ap-create");
    expect(after.status).toBe("approved");
    const rows = await actionRows("ap-create");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "approve",
      actor: people.a.user.email,
      payload: { via: "slack", slack_user_id: "UAAAA" },
    });
    expect(answers).toHaveLength(1);
    expect(answers[0]!.replace_original).toBe(true);
    const text = JSON.stringify(answers[0]);
    expect(text).toContain(`Approved by ${people.a.user.email}`);
    expect(text).not.toContain(ACTION_IDS.approve);
    expect(text).not.toContain("sk_live_abcdefghijklmnop");
  });

  it("twenty concurrent clicks from two linked approvers meet a quorum of two exactly once", async () => {
    const view = await read("ap-send");
    const payloads = Array.from({ length: 20 }, (_, n) => clickPayload(n % 2 ? "UBBBB" : "UAAAA", "approve", view));
    const answers = await Promise.all(payloads.map((p) => post(signed(p))));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await slackClicksTaken();
    const after = await read("ap-send");
    expect(after.status).toBe("approved");
    const rows = await actionRows("ap-send");
    expect(rows.map((r) => r.action)).toEqual(["approve", "approve"]);
    expect(new Set(rows.map((r) => r.actor))).toEqual(new Set([people.a.user.email, people.b.user.email]));
    const transitions = await t.db.driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid
        WHERE i.invocation_id = 'ap-send' AND a.to_status = 'approved'`,
    );
    expect(transitions[0]!.n).toBe(1);
  });

  it("a bad signature, a stale timestamp and a replayed body are 401 and change nothing", async () => {
    const view = await read("ap-guarded");
    const wrong = await post(signed(clickPayload("UAAAA", "approve", view), { secret: "another-secret-entirely" }));
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe("UNAUTHENTICATED");
    const stale = await post(
      signed(clickPayload("UAAAA", "approve", view), { at: Math.floor(Date.now() / 1000) - 6 * 60 }),
    );
    expect(stale.status).toBe(401);
    const tampered = signed(clickPayload("UAAAA", "approve", view));
    const altered = await post({ ...tampered, raw: tampered.raw.replace("UAAAA", "UBBBB") });
    expect(altered.status).toBe(401);
    const unsigned = await call(interactions, {
      path: PATH,
      raw: tampered.raw,
      contentType: "application/x-www-form-urlencoded",
    });
    expect(unsigned.status).toBe(401);
    await slackClicksTaken();
    expect((await read("ap-guarded")).version).toBe(view.version);

    // The same signed body twice: the first is taken, the second refused. (Reject opens its modal first.)
    const opens = slack.to("/api/views.open").length;
    expect((await post(signed(clickPayload("UAAAA", "reject", view)))).status).toBe(200);
    await slackClicksTaken();
    const modal = slack.to("/api/views.open")[opens]!.body.view as { callback_id: string; private_metadata: string };
    const once = signed({
      type: "view_submission",
      user: { id: "UAAAA" },
      view: { ...modal, state: { values: { reply: { reply: { value: null } } } } },
    });
    expect((await post(once)).status).toBe(200);
    const again = await post(once);
    expect(again.status).toBe(401);
    expect(JSON.stringify(again.body)).toContain("already received");
    await slackClicksTaken();
    expect((await actionRows("ap-guarded")).map((r) => r.action)).toEqual(["reject"]);
  });

  it("an unlinked user and a viewer change nothing and are told why, only to themselves", async () => {
    const view = await read("ap-money");
    const unlinked = await click("UNOBODY", "escalate", "ap-money");
    expect(unlinked.answers).toEqual([
      expect.objectContaining({ response_type: "ephemeral", replace_original: false }),
    ]);
    expect(String(unlinked.answers[0]!.text)).toContain("not linked");
    const viewer = await click("UVVVV", "escalate", "ap-money");
    expect(String(viewer.answers[0]!.text)).toContain("(viewer) cannot act");
    expect((await read("ap-money")).version).toBe(view.version);
  });

  it("a money approval while the policy keeps it for the console changes nothing and says so", async () => {
    const view = await read("ap-money");
    const { answers } = await click("UAAAA", "approve", "ap-money");
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ response_type: "ephemeral" });
    expect(String(answers[0]!.text)).toContain("not taken from Slack");
    expect((await read("ap-money")).version).toBe(view.version);
    expect(await actionRows("ap-money")).toEqual([]);
  });

  it("a click on a call that changed since its message changes nothing; the message is redrawn as the call is now", async () => {
    // ap-create was approved above: a Reject button drawn before that carries the old version.
    const stale = {
      invocation_id: "ap-create",
      runtime: t.runtime,
      version: 1,
      args_digest: (await read("ap-create")).args_digest,
    };
    const payload = clickPayload("UBBBB", "reject", stale);
    expect((await post(signed(payload))).status).toBe(200);
    await slackClicksTaken();
    const answers = responseTo(payload);
    expect(answers.find((a) => a.replace_original === true)).toBeDefined();
    expect(JSON.stringify(answers)).toContain(`Approved by ${people.a.user.email}`);
    expect(JSON.stringify(answers)).toContain("changed since the message was drawn");
    expect((await actionRows("ap-create")).map((r) => r.action)).toEqual(["approve"]);

    // Other arguments than the button showed (its digest): nothing is approved either.
    const guarded = await read("ap-guarded");
    const otherArgs = clickPayload("UAAAA", "approve", { ...guarded, args_digest: "sha256:not-these" });
    await post(signed(otherArgs));
    await slackClicksTaken();
    expect((await read("ap-guarded")).version).toBe(guarded.version);
  });

  it("Found opens a modal; its note is required; the submission settles the call and rewrites the message", async () => {
    const { payload } = await click("UAAAA", "found", "un-1");
    const opened = slack.to("/api/views.open").at(-1)!;
    expect(opened.authorization).toBe("Bearer xoxb-1-2-test");
    expect(opened.body.trigger_id).toBe(payload.trigger_id);
    const view = opened.body.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(RECORD_CALLBACK);
    expect(slack.refused).toEqual([]);
    expect((await read("un-1")).status).toBe("outcome_unknown");

    const submit = (note: string) => ({
      type: "view_submission",
      user: { id: "UAAAA" },
      view: {
        callback_id: RECORD_CALLBACK,
        private_metadata: view.private_metadata,
        state: { values: { note: { note: { value: note } } } },
      },
    });
    const empty = await post(signed(submit("   ")));
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ response_action: "errors", errors: { note: expect.any(String) } });
    expect((await read("un-1")).status).toBe("outcome_unknown");

    const done = await post(signed(submit("Ticket T-123 exists in the helpdesk")));
    expect(done.status).toBe(200);
    await slackClicksTaken();
    const after = await read("un-1");
    expect(after).toMatchObject({ status: "reconciled", commit_state: "committed" });
    expect(after.resolution).toMatchObject({ actor: people.a.user.email, note: "Ticket T-123 exists in the helpdesk" });
    const rewritten = responseTo(payload).find((a) => a.replace_original === true);
    expect(JSON.stringify(rewritten)).toContain(`Settled by ${people.a.user.email}`);
  });
});
