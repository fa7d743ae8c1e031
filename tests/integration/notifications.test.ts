import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as channelsRoute from "@/app/api/v1/admin/notifications/route";
import * as channelRoute from "@/app/api/v1/admin/notifications/[channel_id]/route";
import * as messagesRoute from "@/app/api/v1/admin/notifications/[channel_id]/messages/route";
import * as resendRoute from "@/app/api/v1/admin/notifications/[channel_id]/messages/[message_id]/resend/route";
import { apiRoutes } from "@/server/routes";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { resetEnv } from "@/lib/env";
import { webhookJob } from "@/lib/jobs/webhooks";
import { runVerifications } from "@/lib/verify/schedule";
import { runCli } from "@/cli/main";
import { getDb } from "@/lib/db/client";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";
import { startReceiver, type Receiver } from "./webhook-receiver";
import { startSmtpReceiver, type SmtpReceiver } from "./smtp-receiver";
import { stringifyExactJson } from "@/lib/json/exact";

// Telling people: channels collect what needs a person from status changes and scans, a storm becomes one
// message per channel per digest window, Slack-style messages are signed Block Kit without buttons, email
// goes through a real SMTP server, and every message is an outbox delivery (retried, logged, resent).

const T0 = Math.floor(Date.now() / 1000) * 1000 - 3 * 3_600_000;
const at = (s: number) => new Date(T0 + s * 1000);
const timeout = { title: "Gateway Timeout", status: 504 };
const answerVerification = apiRoutes["/api/v1/verifications"].POST;
const takeWork = apiRoutes["/api/v1/verifications"].GET;

type Slack = { text: string; blocks: Array<{ type: string; text?: { text: string }; elements?: unknown[] }> };

describe.each<Backend>(["postgres", "pglite"])("notifications on %s", (backend) => {
  let t: TestContext;
  let receiver: Receiver;
  let smtp: SmtpReceiver;
  let admin: { token: string; user: { email: string } };
  let billing: { key: string; runtime: string };

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    t = await openSettle(backend, {
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_SMTP_URL: smtp.url,
      SETTLE_SMTP_FROM: "Settle <settle@example.com>",
      SETTLE_PUBLIC_URL: "https://settle.example.com",
    });
    receiver = await startReceiver();
    admin = await createOperator(t.db, "admin");
    billing = await createRuntimeKey(t.db, "billing-agent");
  });
  afterAll(async () => {
    await receiver?.close();
    await smtp?.close();
    await t?.teardown();
  });

  const run = (now: Date) => {
    receiver.setNow(now);
    return webhookJob.run(t.db, now) as Promise<{ digests: number; sent: { delivered: number; retrying: number } }>;
  };

  async function addChannel(body: Record<string, unknown>, path?: string) {
    const res = await call(channelsRoute.POST, { key: admin.token, path: "/api/v1/admin/notifications", body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    if (path) receiver.secrets.set(path, res.body.secret);
    return res.body.channel as { id: string };
  }

  const unknownCalls = (prefix: string, n: number, startS: number, tool = "create_refund", effect = "money") =>
    Array.from({ length: n }, (_, i) => {
      const id = `${prefix}-${i}`;
      return {
        event_id: `${id}-o`,
        task_id: `task-${id}`,
        invocation_id: id,
        attempt: 1,
        tool,
        effect_class: effect,
        idempotency_key: `k-${id}`,
        arguments: { amount: 1200 + i, currency: "EUR", customer: `cus_${i}` },
        at: at(startS + (i % 50)).toISOString(),
        envelope: timeout,
      };
    });

  async function send(key: string, records: unknown[]) {
    for (let i = 0; i < records.length; i += 250) {
      const res = await call(ingest, { key, body: { records: records.slice(i, i + 250) } });
      expect(res.body.accepted).toBe(Math.min(250, records.length - i));
    }
  }

  it("admin API: channels are audited, validated, private addresses refused without the development flag", async () => {
    const bad = await call(channelsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/notifications",
      body: { kind: "slack", url: "ftp://hooks.example.com/x" },
    });
    expect(bad.status).toBe(400);
    const noRuntime = await call(channelsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/notifications",
      body: { kind: "email", to: ["ops@example.com"], runtimes: ["nobody"] },
    });
    expect(noRuntime.status).toBe(400);
    expect(JSON.stringify(noRuntime.body)).toContain("No runtime nobody");

    const { setEnv } = await import("@/lib/env");
    setEnv({ SETTLE_WEBHOOK_ALLOW_PRIVATE: "0" });
    try {
      const refused = await call(channelsRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/notifications",
        body: { kind: "slack", url: receiver.url("/private") },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe("UNSAFE_URL");
    } finally {
      setEnv({ SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    }

    const viewer = await createOperator(t.db, "operator");
    const forbidden = await call(channelsRoute.GET, { key: viewer.token, path: "/api/v1/admin/notifications" });
    expect(forbidden.status).toBe(403);

    const made = await addChannel({
      kind: "email",
      to: ["audit@example.com"],
      events: ["approval_needed"],
      digest_s: 5,
    });
    const patched = await call(channelRoute.PATCH, {
      key: admin.token,
      params: { channel_id: made.id },
      body: { enabled: false },
    });
    expect(patched.body).toMatchObject({ enabled: false, events: ["approval_needed"], digest_s: 5 });
    const gone = await call(channelRoute.DELETE, { key: admin.token, params: { channel_id: made.id } });
    expect(gone.status).toBe(200);
    const trail = await t.db.prisma.adminAction.findMany({ where: { targetId: made.id }, orderBy: { at: "asc" } });
    expect(trail.map((a) => a.action)).toEqual([
      "notification_channel_created",
      "notification_channel_updated",
      "notification_channel_deleted",
    ]);
    expect(stringifyExactJson(trail)).not.toContain("whsec_");
  });

  it("500 unknowns in a minute are one signed Slack message and one email per channel, naming the first few", async () => {
    const slack = await addChannel(
      { kind: "slack", url: receiver.url("/slack"), runtimes: ["billing-agent"], effect_classes: ["money"] },
      "/slack",
    );
    const email = await addChannel({ kind: "email", to: ["ops@example.com"], runtimes: ["billing-agent"] });
    // Hears of another runtime and of sends only: told nothing of this storm.
    await addChannel({ kind: "slack", url: receiver.url("/other"), runtimes: [t.runtime] }, "/other");
    await addChannel(
      { kind: "slack", url: receiver.url("/sends"), runtimes: ["billing-agent"], effect_classes: ["send"] },
      "/sends",
    );

    await send(billing.key, unknownCalls("storm", 500, 0));
    expect((await run(at(55))).digests).toBe(0);
    expect(receiver.received.filter((r) => r.path === "/slack")).toHaveLength(0);
    const sent = await run(at(125));
    expect(sent.digests).toBe(2);
    expect((await run(at(400))).digests).toBe(0);

    const slackMessages = receiver.received.filter((r) => r.path === "/slack");
    expect(slackMessages).toHaveLength(1);
    expect(receiver.received.filter((r) => r.path === "/other" || r.path === "/sends")).toHaveLength(0);
    const message = slackMessages[0]!;
    expect(message.verified).toBe(true);
    expect(message.eventType).toBe("notification.digest");
    const body = JSON.parse(message.body) as Slack;
    expect(body.blocks[0]).toMatchObject({
      type: "header",
      text: { text: "500 calls need a person: a new unknown or stalled call" },
    });
    const sections = body.blocks.filter((b) => b.type === "section");
    expect(sections).toHaveLength(5);
    expect(sections[0]!.text!.text).toContain(
      "<https://settle.example.com/invocations/storm-0?runtime=billing-agent|amount 1200 · currency EUR · customer cus_0>",
    );
    expect(sections[0]!.text!.text).toContain("create_refund · billing-agent · money · Outcome unknown");
    expect(JSON.stringify(body.blocks.at(-1))).toContain("…and 495 more");
    // Nothing to press: decisions are made signed in.
    expect(message.body).not.toMatch(/"type":"(actions|button)"/);

    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.to).toEqual(["ops@example.com"]);
    expect(mail.from).toBe("settle@example.com");
    expect(mail.subject).toBe(
      "[Settle] 500 calls need a person: a new unknown or stalled call: amount 1200 · currency EUR · customer cus_0",
    );
    expect(mail.text).toContain(
      "create_refund: amount 1200 · currency EUR · customer cus_0 · billing-agent · Outcome unknown (the outcome is unknown)",
    );
    expect(mail.text).toContain("https://settle.example.com/invocations/storm-0?runtime=billing-agent");
    expect(mail.text).toContain("…and 495 more.");

    const log = await call(messagesRoute.GET, { key: admin.token, params: { channel_id: slack.id } });
    expect(log.body.items).toHaveLength(1);
    expect(log.body.items[0]).toMatchObject({ status: "delivered", event_type: "notification.digest", attempts: 1 });
    const channel = await call(channelRoute.GET, { key: admin.token, params: { channel_id: email.id } });
    expect(channel.body).toMatchObject({ waiting: 0, messages: { delivered: 1, pending: 0, failed: 0 } });
  });

  it("a failing receiver is retried with back-off and logged; Resend sends again and is audited", async () => {
    const rt = await createRuntimeKey(t.db, "flaky-agent");
    const slack = await addChannel(
      { kind: "slack", url: receiver.url("/flaky"), runtimes: ["flaky-agent"], digest_s: 0 },
      "/flaky",
    );
    const email = await addChannel({
      kind: "email",
      to: ["night@example.com"],
      runtimes: ["flaky-agent"],
      digest_s: 0,
    });
    await send(rt.key, unknownCalls("flaky", 1, 1000));
    receiver.failNext(1);
    smtp.failNext(1);
    const mailsBefore = smtp.mails.length;
    await run(at(1100));
    const first = await call(messagesRoute.GET, { key: admin.token, params: { channel_id: slack.id } });
    expect(first.body.items[0]).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500 });
    const mailLog = await call(messagesRoute.GET, { key: admin.token, params: { channel_id: email.id } });
    expect(mailLog.body.items[0]).toMatchObject({ status: "pending", attempts: 1 });
    expect(mailLog.body.items[0].last_error).toMatch(/^SMTP: .*451/);

    // Not due again within the first back-off (30 s ± 20 %); due after it.
    await run(at(1110));
    expect(
      (await call(messagesRoute.GET, { key: admin.token, params: { channel_id: slack.id } })).body.items[0].attempts,
    ).toBe(1);
    await run(at(1140));
    const second = await call(messagesRoute.GET, { key: admin.token, params: { channel_id: slack.id } });
    expect(second.body.items[0]).toMatchObject({ status: "delivered", attempts: 2 });
    expect(smtp.mails.length).toBe(mailsBefore + 1);

    const messageId = second.body.items[0].id;
    const resent = await call(resendRoute.POST, {
      key: admin.token,
      params: { channel_id: slack.id, message_id: messageId },
    });
    expect(resent.body).toMatchObject({ status: "pending", attempts: 0, resent_by: admin.user.email });
    const entry = await t.db.prisma.adminAction.findFirst({
      where: { action: "notification_message_resent", targetId: messageId },
    });
    expect(entry?.actor).toBe(admin.user.email);
    const wrong = await call(resendRoute.POST, {
      key: admin.token,
      params: { channel_id: email.id, message_id: messageId },
    });
    expect(wrong.status).toBe(404);
  });

  it("an unknown whose tool has a verifier is told only when verification ends without settling it", async () => {
    const rt = await createRuntimeKey(t.db, "verified-agent");
    await addToolCatalogEntry(
      t.db,
      {
        runtime: rt.runtime,
        pattern: "create_refund",
        effect_class: "money",
        verify: { after_s: 0, every_s: 60, max_tries: 1, absent_after_s: 86_400, lease_s: 30 },
      },
      "admin@example.com",
    );
    const channel = await addChannel(
      { kind: "slack", url: receiver.url("/verified"), runtimes: ["verified-agent"], digest_s: 0 },
      "/verified",
    );
    const now = new Date();
    await send(rt.key, [{ ...unknownCalls("v", 1, 0)[0], at: new Date(now.getTime() - 120_000).toISOString() }]);
    await runVerifications(t.db, now);
    await run(now);
    expect(receiver.received.filter((r) => r.path === "/verified")).toHaveLength(0);

    const work = await call(takeWork, { key: rt.key, path: "/api/v1/verifications?worker=w" });
    expect(work.body.items).toHaveLength(1);
    const answered = await call(answerVerification, {
      key: rt.key,
      path: "/api/v1/verifications",
      body: { answers: [{ id: work.body.items[0].id, found: false, evidence: "no refund under k-v-0 yet" }] },
    });
    expect(answered.body.results[0]).toMatchObject({ state: "gave_up" });
    await run(new Date(now.getTime() + 1000));
    const told = receiver.received.filter((r) => r.path === "/verified");
    expect(told).toHaveLength(1);
    expect(JSON.parse(told[0]!.body).blocks[1].text.text).toContain(
      "Escalated (verification ended without settling it)",
    );
    const log = await call(messagesRoute.GET, { key: admin.token, params: { channel_id: channel.id } });
    expect(log.body.items).toHaveLength(1);
  });

  it("tells of a possible duplicate flagged after the fact", async () => {
    const rt = await createRuntimeKey(t.db, "refund-agent");
    await addChannel(
      {
        kind: "slack",
        url: receiver.url("/dupes"),
        runtimes: ["refund-agent"],
        events: ["possible_duplicate"],
        digest_s: 0,
      },
      "/dupes",
    );
    const now = new Date();
    await run(now);
    const refund = (id: string, s: number) => ({
      event_id: `${id}-o`,
      task_id: "task-refunds",
      invocation_id: id,
      attempt: 1,
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: `k-${id}`,
      arguments: { charge: "ch_9", amount: 90 },
      at: new Date(now.getTime() + s * 1000).toISOString(),
      envelope: { ok: true, commit_state: "committed" },
    });
    await send(rt.key, [refund("d1", 0)]);
    await send(rt.key, [refund("d2", 1)]);
    await run(new Date(Date.now() + 2000));
    const told = receiver.received.filter((r) => r.path === "/dupes");
    expect(told).toHaveLength(1);
    const body = JSON.parse(told[0]!.body) as Slack;
    expect(body.blocks[0]!.text!.text).toBe("1 call needs a person: a possible duplicate");
    expect(body.blocks[1]!.text!.text).toContain("invocations/d2?runtime=refund-agent");
  });

  it("tells of approvals and stalls, each only to channels that hear of that event", async () => {
    const rt = await createRuntimeKey(t.db, "ops-agent");
    await addChannel(
      { kind: "slack", url: receiver.url("/stalls"), runtimes: ["ops-agent"], events: ["unknown"], digest_s: 0 },
      "/stalls",
    );
    await addChannel(
      {
        kind: "slack",
        url: receiver.url("/approvals"),
        runtimes: ["ops-agent"],
        events: ["approval_needed"],
        digest_s: 0,
      },
      "/approvals",
    );
    const now = new Date();
    await run(now);
    const base = { task_id: "task-ops", tool: "send_email", effect_class: "send", attempt: 1 };
    await send(rt.key, [
      // An intent and nothing after it: stalled once its stall window (300 s) has passed.
      {
        ...base,
        event_id: "s-i",
        invocation_id: "s1",
        idempotency_key: "k-s1",
        phase: "intent",
        at: now.toISOString(),
      },
      {
        ...base,
        event_id: "a-o",
        invocation_id: "a1",
        idempotency_key: "k-a1",
        at: now.toISOString(),
        envelope: { ok: false, commit_state: "not_committed", next_action: "request_approval" },
      },
    ]);
    await run(new Date(now.getTime() + 1000));
    const approvals = receiver.received.filter((r) => r.path === "/approvals");
    expect(approvals.map((r) => JSON.parse(r.body).blocks[0].text.text)).toEqual([
      "1 call needs a person: approval needed",
    ]);
    expect(receiver.received.filter((r) => r.path === "/stalls")).toHaveLength(0);
    await run(new Date(now.getTime() + 301_000));
    const stalls = receiver.received.filter((r) => r.path === "/stalls");
    expect(stalls).toHaveLength(1);
    expect(JSON.parse(stalls[0]!.body).blocks[1].text.text).toContain("Stalled (no outcome reported in time)");
    // A rescan over the same window tells nothing twice.
    await run(new Date(now.getTime() + 302_000));
    expect(receiver.received.filter((r) => r.path === "/stalls")).toHaveLength(1);
    expect(receiver.received.filter((r) => r.path === "/approvals")).toHaveLength(1);
    resetEnv();
  });
});

describe("settle notifications", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres", { SETTLE_SMTP_URL: "smtp://127.0.0.1:2525" });
    await createRuntimeKey(t.db, "billing-agent");
  });
  afterAll(async () => {
    await t?.teardown();
    resetEnv();
  });

  it("the CLI adds, lists and removes channels, audited as cli; bad input is one line and exit 1", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      sleep: async () => {},
    };
    const add = await runCli(
      [
        "notifications",
        "add",
        "email",
        "cli@example.com",
        "--runtimes",
        "billing-agent",
        "--classes",
        "money",
        "--digest",
        "30",
      ],
      io,
    );
    expect(add, err.join("")).toBe(0);
    expect(out.join("")).toMatch(/^whsec_/);
    const id = /channel ([0-9a-f-]{36})/.exec(err.join(""))![1]!;
    out.length = 0;
    expect(await runCli(["notifications", "list", "--json"], io)).toBe(0);
    expect(JSON.parse(out.join("")).find((c: { id: string }) => c.id === id)).toMatchObject({
      kind: "email",
      to: ["cli@example.com"],
      runtimes: ["billing-agent"],
      effect_classes: ["money"],
      digest_s: 30,
    });
    err.length = 0;
    expect(
      await runCli(["notifications", "add", "slack", "https://hooks.example.com/x", "--events", "everything"], io),
    ).toBe(1);
    expect(err.join("")).toMatch(/^settle notifications add: events\.0: /);
    expect(await runCli(["notifications", "remove", id], io)).toBe(0);
    const trail = await (
      await getDb()
    ).prisma.adminAction.findMany({ where: { targetId: id }, orderBy: { at: "asc" } });
    expect(trail.map((a) => [a.actor, a.action])).toEqual([
      ["cli", "notification_channel_created"],
      ["cli", "notification_channel_deleted"],
    ]);
  });
});
