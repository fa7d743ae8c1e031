import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as webhooks from "@/app/api/v1/admin/webhooks/route";
import { actOnInvocation } from "@/lib/invocations/act";
import { createNotificationChannel, newNotificationChannelSchema } from "@/lib/notifications/channels";
import { createWebhookEndpoint } from "@/lib/webhooks/endpoints";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";
import { apiRoutes } from "@/server/routes";

// Issue 36's low findings that live behind the API: webhook and channel URLs a viewer reads in the audit
// trail, a NAT64 address that reaches the metadata service, and an approval given while a call had no arguments.

const audit = apiRoutes["/api/v1/audit"].GET;
const key = (n: number) => "Kq7Wz2Xv9Bn4Lm1Jh6Gf3Ds8Ap0Tr5Yc".repeat(3).slice(0, n);
const publicLookup = async () => [{ address: "93.184.216.34", family: 4 }];

describe("issue 36's low findings", () => {
  let t: TestContext;
  let admin: string;
  let viewer: string;
  beforeAll(async () => {
    t = await openSettle("postgres");
    admin = (await createOperator(t.db, "admin")).token;
    viewer = (await createOperator(t.db, "viewer")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("a viewer reads webhook and channel URLs in the audit trail with their keys redacted", async () => {
    const discordToken = key(68);
    const mattermostKey = "xi3t6fyqk7bm5gxjc8e4a1odpr";
    const queryToken = key(30);
    await createWebhookEndpoint(
      t.db,
      { runtime: t.runtime, url: `https://discord.com/api/webhooks/112233445566778899/${discordToken}` },
      "admin@example.com",
      { lookup: publicLookup },
    );
    await createWebhookEndpoint(
      t.db,
      { runtime: t.runtime, url: `https://alerts.example.com/notify?token=${queryToken}` },
      "admin@example.com",
      { lookup: publicLookup },
    );
    await createNotificationChannel(
      t.db,
      newNotificationChannelSchema.parse({ kind: "slack", url: `https://chat.example.com/hooks/${mattermostKey}` }),
      "admin@example.com",
      { lookup: publicLookup },
    );
    const read = await call(audit, { key: viewer, path: "/api/v1/audit?limit=50" });
    expect(read.status).toBe(200);
    const text = JSON.stringify(read.body);
    for (const secret of [discordToken, mattermostKey, queryToken]) expect(text).not.toContain(secret);
    expect(text).toContain("https://discord.com/api/webhooks/112233445566778899/[redacted]");
    expect(text).toContain("https://chat.example.com/hooks/[redacted]");
    expect(text).toContain("https://alerts.example.com/notify?token=[redacted]");
    // What is stored holds no key either: the trail is kept, not only shown, without it.
    const stored = await t.db.driver.query<{ after: unknown }>("SELECT after FROM admin_actions");
    for (const secret of [discordToken, mattermostKey, queryToken])
      expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it("refuses a webhook to an address NAT64 or SIIT maps to a private or reserved IPv4 one", async () => {
    for (const url of [
      "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
      "http://[64:ff9b::10.0.0.1]/hook",
      "http://[::ffff:0:7f00:1]/hook",
    ]) {
      const res = await call(webhooks.POST, {
        key: admin,
        path: "/api/v1/admin/webhooks",
        headers: { origin: "http://settle.test" },
        body: { runtime: t.runtime, url },
      });
      expect(res.status, url).toBe(400);
      expect(res.body.code).toBe("UNSAFE_URL");
    }
  });

  it("an approval given while the call had no arguments is flagged when it runs with arguments", async () => {
    const asked = (id: string) => ({
      event_id: `${id}-ask`,
      task_id: `task-${id}`,
      invocation_id: id,
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: `key-${id}`,
      envelope: { ok: false, commit_state: "not_committed", next_action: "request_approval" },
    });
    const ran = (id: string, args?: object) => ({
      event_id: `${id}-ran`,
      task_id: `task-${id}`,
      invocation_id: id,
      attempt: 2,
      tool: "create_refund",
      idempotency_key: `key-${id}`,
      ...(args ? { arguments: args } : {}),
      envelope: { ok: true, commit_state: "committed" },
    });
    await call(ingest, { key: t.key, body: { records: [asked("na1"), asked("na2")] } });
    const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
    for (const id of ["na1", "na2"]) {
      const before = await read(id);
      expect(before).toMatchObject({ status: "awaiting_approval", ran_with_other_arguments: false });
      await actOnInvocation(
        t.db,
        { invocationId: id },
        { action: "approve" },
        { actor: "ana@example.com", version: before.version },
      );
    }
    await call(ingest, {
      key: t.key,
      body: { records: [ran("na1", { amount: 5000, currency: "EUR" }), ran("na2")] },
    });
    expect(await read("na1")).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: true,
      arguments_review: "open",
    });
    expect(await read("na2")).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_review: null,
    });
  });
});
