import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putPolicy } from "@/lib/policies/policies";
import { addSlackLink } from "@/lib/slack/links";
import { EDIT_CALLBACK, REPLY_CALLBACK } from "@/lib/slack/modals";
import { setSlackSettings } from "@/lib/slack/settings";
import { argsDigest } from "@/lib/write/args-digest";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getDecision, getInvocation, ingest, invocationActions } from "./routes";
import { slackClient, type OpenedModal } from "./slack-client";
import { startSlackReceiver, type SlackReceiver } from "./slack-receiver";

// The Slack modals of issue 40 §2: Approve with edits (the arguments as JSON to edit, an optional note) and
// Reject / Escalate with a message to the agent. A submission is the click it stands for: the same checks, the
// same operator action as the console's, audited via Slack; a field's error is answered to Slack and changes
// nothing.

const SECRET = "0c1d2e3f4a5b6c7d8e9f00112233aabb";
const approval = { ok: false, commit_state: "not_committed", next_action: "request_approval" };
const ARGS = { to: "cus@example.com", amount: 12, currency: "EUR" };

describe("Slack modals: approve with edits, a message to the agent", () => {
  let t: TestContext;
  let slack: SlackReceiver;
  let client: ReturnType<typeof slackClient>;
  const people = {} as Record<"a" | "b" | "viewer", { user: { email: string }; token: string }>;

  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const decision = async (id: string) => (await call(getDecision, { key: t.key, params: { invocation_id: id } })).body;
  const actionRows = (id: string) =>
    t.db.driver.query<{ action: string; actor: string; payload: Record<string, any> }>(
      `SELECT a.action, a.actor, a.payload FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid
        WHERE i.invocation_id = $1 ORDER BY a.seq`,
      [id],
    );
  const field = (modal: OpenedModal, blockId: string) => modal.blocks.find((b) => b.block_id === blockId);
  const click = async (user: string, action: Parameters<typeof client.click>[1], id: string) =>
    client.click(user, action, await read(id));

  beforeAll(async () => {
    t = await openSettle("postgres", {
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_PUBLIC_URL: "https://settle.example.com",
    });
    slack = await startSlackReceiver();
    client = slackClient(slack, SECRET);
    await setSlackSettings(
      t.db,
      { signing_secret: SECRET, bot_token: "xoxb-9-9-test", api_base_url: slack.url("/api") },
      "admin@example.com",
    );
    people.a = await createOperator(t.db, "operator");
    people.b = await createOperator(t.db, "manager");
    people.viewer = await createOperator(t.db, "viewer");
    for (const [who, id] of [
      ["a", "UAAAA"],
      ["b", "UBBBB"],
      ["viewer", "UVVVV"],
    ] as const)
      await addSlackLink(t.db, { email: people[who].user.email, slack_user_id: id }, "admin@example.com");
    await putPolicy(
      t.db,
      "send",
      { overdue_after_s: null, escalate_after_s: null, approval_expires_after_s: null, approval_quorum: 2 },
      "admin@example.com",
    );
    const rec = (id: string, cls: string, args: object) => ({
      event_id: `${id}-e`,
      task_id: `task-${id}`,
      invocation_id: id,
      attempt: 1,
      tool: cls === "send" ? "send_email" : "create_ticket",
      effect_class: cls,
      idempotency_key: `k-${id}`,
      arguments: args,
      at: new Date().toISOString(),
      envelope: approval,
    });
    const ids = ["ed-ok", "ed-refused", "ed-who", "ed-stale", "rj-1", "es-1"];
    const res = await call(ingest, {
      key: t.key,
      body: {
        records: [
          ...ids.map((id) =>
            rec(id, "create", id === "ed-refused" ? { ...ARGS, api_key: "sk_live_abcdefghijklmnop" } : ARGS),
          ),
          rec("q-edit", "send", ARGS),
          rec("q-console", "send", ARGS),
        ],
      },
    });
    expect(res.body.accepted).toBe(8);
  });
  afterAll(async () => {
    await slack?.close();
    await t?.teardown();
  });

  it("Approve with edits opens the arguments as JSON; the submission approves with them, as the decision says", async () => {
    const { modal, payload, trigger } = await click("UAAAA", "approve_edit", "ed-ok");
    expect(trigger).toBe(payload.trigger_id);
    expect(modal!.callback_id).toBe(EDIT_CALLBACK);
    const editor = field(modal!, "arguments")!;
    expect(JSON.parse(editor.element.initial_value)).toEqual(ARGS);
    expect(editor.element.multiline).toBe(true);
    expect(JSON.parse(modal!.private_metadata)).toMatchObject({ a: "approve", b: { i: "ed-ok", d: argsDigest(ARGS) } });

    const edited = { ...ARGS, amount: 50, ticket: "T-9" };
    const res = await client.submit("UAAAA", modal!, { arguments: JSON.stringify(edited, null, 2), note: "half" });
    expect(res.status).toBe(200);
    expect(await read("ed-ok")).toMatchObject({
      status: "approved",
      arguments_edit: { state: "approved", arguments: edited },
    });
    expect(await decision("ed-ok")).toMatchObject({ decision: "proceed", approved_arguments: edited });
    const rows = await actionRows("ed-ok");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "approve",
      actor: people.a.user.email,
      payload: {
        via: "slack",
        slack_user_id: "UAAAA",
        action: { arguments: edited },
        edit: {
          changes: [
            { path: "amount", before: 12, after: 50 },
            { path: "ticket", after: "T-9" },
          ],
        },
      },
    });
    const rewritten = payload && client.responseTo(payload).find((a) => a.replace_original === true);
    const text = JSON.stringify(rewritten);
    expect(text).toContain(`Approved by ${people.a.user.email}`);
    expect(text).toContain("with edits: amount, ticket");
    expect(text).not.toContain("settle_approve");
  });

  it("invalid JSON and a redacted value are field errors, and change nothing", async () => {
    const before = await read("ed-refused");
    const { modal } = await click("UAAAA", "approve_edit", "ed-refused");
    const shown = field(modal!, "arguments")!.element.initial_value as string;
    expect(shown).toContain("[redacted]");
    expect(shown).not.toContain("sk_live_abcdefghijklmnop");

    const invalid = await client.submit("UAAAA", modal!, { arguments: '{"amount": 50,', note: null });
    expect(invalid.status).toBe(200);
    expect(invalid.body).toMatchObject({
      response_action: "errors",
      errors: { arguments: expect.stringContaining("Not valid JSON") },
    });
    const notObject = await client.submit("UAAAA", modal!, { arguments: "[1, 2]", note: null });
    expect(notObject.body.errors.arguments).toContain("JSON object");
    const secret = await client.submit("UAAAA", modal!, { arguments: shown.replace("12", "50"), note: null });
    expect(secret.body).toMatchObject({
      response_action: "errors",
      errors: { arguments: expect.stringContaining("[redacted]") },
    });
    expect((await read("ed-refused")).version).toBe(before.version);
    expect(await actionRows("ed-refused")).toEqual([]);
  });

  it("an unlinked user and a viewer get no modal, and a viewer's submission changes nothing", async () => {
    const unlinked = await click("UNOBODY", "approve_edit", "ed-who");
    expect(unlinked.modal).toBeNull();
    expect(String(unlinked.answers()[0]!.text)).toContain("not linked");
    const viewer = await click("UVVVV", "reject", "ed-who");
    expect(viewer.modal).toBeNull();
    expect(String(viewer.answers()[0]!.text)).toContain("(viewer) cannot act");

    // A modal opened by an approver, submitted as the viewer: the submission is checked as a click is.
    const { modal, payload } = await click("UAAAA", "approve_edit", "ed-who");
    await client.submit("UVVVV", modal!, { arguments: JSON.stringify({ ...ARGS, amount: 1 }), note: null });
    expect(String(client.responseTo(payload).at(-1)!.text)).toContain("(viewer) cannot act");
    const rejecting = await click("UAAAA", "reject", "ed-who");
    await client.submit("UNOBODY", rejecting.modal!, { reply: "no" });
    expect(await actionRows("ed-who")).toEqual([]);
    expect((await read("ed-who")).status).toBe("awaiting_approval");
  });

  it("a modal submitted after the call changed changes nothing, and the message is redrawn as the call is now", async () => {
    const { modal, payload } = await click("UAAAA", "approve_edit", "ed-stale");
    const now = await read("ed-stale");
    const comment = await call(invocationActions, {
      key: people.b.token,
      params: { invocation_id: "ed-stale" },
      body: { action: "comment", note: "checking the amount", version: now.version },
    });
    expect(comment.status).toBe(200);
    await client.submit("UAAAA", modal!, { arguments: JSON.stringify({ ...ARGS, amount: 1 }), note: null });
    const answers = client.responseTo(payload);
    expect(answers.find((a) => a.replace_original === true)).toBeDefined();
    expect(JSON.stringify(answers)).toContain("changed since the message was drawn");
    expect((await actionRows("ed-stale")).map((r) => r.action)).toEqual(["comment"]);
    expect((await read("ed-stale")).status).toBe("awaiting_approval");

    // The old button itself: no modal opens, the message is redrawn.
    const stale = await client.click("UAAAA", "approve_edit", now);
    expect(stale.modal).toBeNull();
    expect(stale.answers().find((a) => a.replace_original === true)).toBeDefined();
  });

  it("Reject opens a message to the agent; the decision returns it and the message shows it", async () => {
    const { modal, payload } = await click("UBBBB", "reject", "rj-1");
    expect(modal!.callback_id).toBe(REPLY_CALLBACK);
    expect(field(modal!, "reply")!.optional).toBe(true);
    expect((await read("rj-1")).status).toBe("awaiting_approval");
    const reply = "Refund at most 50 EUR; ask the customer";
    expect((await client.submit("UBBBB", modal!, { reply: `  ${reply} ` })).status).toBe(200);
    expect(await decision("rj-1")).toMatchObject({ decision: "abandon", reply });
    const rows = await actionRows("rj-1");
    expect(rows).toMatchObject([
      { action: "reject", actor: people.b.user.email, payload: { via: "slack", action: { reply } } },
    ]);
    const text = JSON.stringify(client.responseTo(payload).find((a) => a.replace_original === true));
    expect(text).toContain(`Rejected by ${people.b.user.email}`);
    expect(text).toContain(`to the agent: “${reply}”`);
  });

  it("Escalate takes its message; an empty one is no message", async () => {
    const { modal } = await click("UAAAA", "escalate", "es-1");
    await client.submit("UAAAA", modal!, { reply: "   " });
    const rows = await actionRows("es-1");
    expect(rows).toMatchObject([{ action: "escalate", actor: people.a.user.email, payload: { via: "slack" } }]);
    expect(rows[0]!.payload.action.reply ?? null).toBeNull();
    expect((await decision("es-1")).reply).toBeNull();
  });

  it("with a quorum, an edit waits for the next approver, whose message shows and binds the edited arguments", async () => {
    const edited = { ...ARGS, amount: 40 };
    const first = await click("UAAAA", "approve_edit", "q-edit");
    await client.submit("UAAAA", first.modal!, { arguments: JSON.stringify(edited), note: null });
    const pending = await read("q-edit");
    expect(pending).toMatchObject({
      status: "awaiting_approval",
      arguments_edit: { state: "pending", arguments: edited },
    });
    const message = client.responseTo(first.payload).find((a) => a.replace_original === true)!;
    expect(JSON.stringify(message)).toContain(`edited by ${people.a.user.email}, awaiting approval`);
    const approve = client.drawnButton(message, "approve")!;
    expect(approve).toMatchObject({ version: pending.version, args_digest: argsDigest(edited) });
    expect(client.drawnButton(message, "approve_edit")).toEqual(approve);
    await client.click("UBBBB", "approve", approve);
    expect(await decision("q-edit")).toMatchObject({ decision: "proceed", approved_arguments: edited });
  });

  it("an approval with edits made in the console is a change: an Approve drawn for the old arguments takes nothing", async () => {
    const drawn = await read("q-console");
    const edited = await call(invocationActions, {
      key: people.a.token,
      params: { invocation_id: "q-console" },
      body: { action: "approve", arguments: { ...ARGS, amount: 99 }, version: drawn.version },
    });
    expect(edited.status).toBe(200);
    const { answers } = await client.click("UBBBB", "approve", drawn);
    expect(JSON.stringify(answers())).toContain("changed since the message was drawn");
    expect((await read("q-console")).status).toBe("awaiting_approval");
    expect((await actionRows("q-console")).map((r) => r.actor)).toEqual([people.a.user.email]);
  });

  it("Slack accepted every modal Settle opened (Block Kit's limits)", () => {
    expect(slack.to("/api/views.open").length).toBeGreaterThan(5);
    expect(slack.refused).toEqual([]);
  });
});
