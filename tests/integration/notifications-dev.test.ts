import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as channelsRoute from "@/app/api/v1/admin/notifications/route";
import * as channelRoute from "@/app/api/v1/admin/notifications/[channel_id]/route";
import * as messagesRoute from "@/app/api/v1/admin/notifications/[channel_id]/messages/route";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { resetEnv, setEnv } from "@/lib/env";
import { webhookJob } from "@/lib/jobs/webhooks";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";
import { startReceiver, type Receiver } from "./webhook-receiver";

// Notifications as a developer meets them on one machine: a channel to a loopback receiver that the server
// refuses (its own SETTLE_WEBHOOK_ALLOW_PRIVATE decides, not the CLI's that added it), a message sent late
// (its ages are those at sending), and a refusal seen on the channel's row, not only in its message log.

const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const at = (s: number) => new Date(T0 + s * 1000);

describe.each<Backend>(["postgres", "pglite"])("notifications in development on %s", (backend) => {
  let t: TestContext;
  let receiver: Receiver;
  let admin: { token: string };

  beforeAll(async () => {
    t = await openSettle(backend, { SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    receiver = await startReceiver();
    admin = await createOperator(t.db, "admin");
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.teardown();
    resetEnv();
  });

  const run = (now: Date) => {
    receiver.setNow(now);
    return webhookJob.run(t.db, now);
  };
  const unknownCall = (id: string, s: number) => ({
    event_id: `${id}-o`,
    task_id: `task-${id}`,
    invocation_id: id,
    attempt: 1,
    tool: "create_refund",
    effect_class: "money",
    idempotency_key: `k-${id}`,
    at: at(s).toISOString(),
    envelope: { title: "Gateway Timeout", status: 504 },
  });
  async function addChannel(path: string, rt: { runtime: string }) {
    const res = await call(channelsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/notifications",
      body: { kind: "slack", url: receiver.url(path), runtimes: [rt.runtime], digest_s: 0 },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    receiver.secrets.set(path, res.body.secret);
    return res.body.channel as { id: string };
  }

  it("a loopback channel the server refuses says the server needs the setting, on its log and its row", async () => {
    // Added where the setting was on (the CLI's shell, say); the server that sends runs without it.
    const rt = await createRuntimeKey(t.db, "dev-agent");
    const channel = await addChannel("/refused", rt);
    setEnv({ SETTLE_WEBHOOK_ALLOW_PRIVATE: "0" });
    try {
      expect((await call(ingest, { key: rt.key, body: { records: [unknownCall("r1", 0)] } })).body.accepted).toBe(1);
      await run(at(10));
    } finally {
      setEnv({ SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    }
    expect(receiver.received.filter((r) => r.path === "/refused")).toHaveLength(0);
    const log = await call(messagesRoute.GET, { key: admin.token, params: { channel_id: channel.id } });
    expect(log.body.items[0]).toMatchObject({ status: "pending", attempts: 1 });
    const refusal = log.body.items[0].last_error as string;
    expect(refusal).toMatch(/^refused: a loopback address \(127.0.0.1\)/);
    expect(refusal).toContain("the Settle server sends to private addresses only when it is started with");
    expect(refusal).toContain("SETTLE_WEBHOOK_ALLOW_PRIVATE=1");

    const row = await call(channelRoute.GET, { key: admin.token, params: { channel_id: channel.id } });
    expect(row.body.last_failure).toEqual({ at: at(10).toISOString(), status: "pending", error: refusal });
    const list = await call(channelsRoute.GET, { key: admin.token, path: "/api/v1/admin/notifications" });
    const listed = list.body.items.find((c: { id: string }) => c.id === channel.id);
    expect(listed.last_failure.error).toBe(refusal);

    // Once a try gets through, the row shows no failure.
    await run(at(600));
    expect(receiver.received.filter((r) => r.path === "/refused")).toHaveLength(1);
    const after = await call(channelRoute.GET, { key: admin.token, params: { channel_id: channel.id } });
    expect(after.body).toMatchObject({ last_failure: null, messages: { delivered: 1, pending: 0 } });
  });

  it("a message sent minutes after it was composed says how long each call has waited at sending", async () => {
    const rt = await createRuntimeKey(t.db, "late-agent");
    const channel = await addChannel("/late", rt);
    await call(ingest, { key: rt.key, body: { records: [unknownCall("l1", 1000)] } });
    receiver.failNext(1);
    await run(at(1003));
    const log = await call(messagesRoute.GET, { key: admin.token, params: { channel_id: channel.id } });
    expect(log.body.items[0]).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500 });
    // Sent 8 minutes after it was composed: the call has waited 8 min, not the 3 s it had when composed.
    await run(at(1480));
    const tries = receiver.received.filter((r) => r.path === "/late");
    expect(tries).toHaveLength(2);
    const section = (i: number) =>
      (JSON.parse(tries[i]!.body) as { blocks: Array<{ text?: { text: string } }> }).blocks[1]!.text!.text;
    expect(section(0)).toContain("for 3 s");
    expect(section(1)).toContain("for 8 min");
  });
});
