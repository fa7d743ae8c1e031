import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as channelsRoute from "@/app/api/v1/admin/notifications/route";
import * as endpointsRoute from "@/app/api/v1/admin/webhooks/route";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { webhookJob } from "@/lib/jobs/webhooks";
import { NO_VERIFIER_RUNNING } from "@/lib/outcome/verification";
import { recordVerifierPoll } from "@/lib/verify/liveness";
import { runVerifications, VERIFIER_ACTOR } from "@/lib/verify/schedule";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getDecision, getInvocation, ingest } from "./routes";
import { startReceiver, type Receiver } from "./webhook-receiver";

// A verifier nobody serves: a runtime whose tool has a verifier, no worker polling and no webhook endpoint. Once
// no worker has asked for two every_s (at least a minute), Settle hands the call to a person (escalated, still
// unknown, audited as settle:verifier), tells the channels why, and the invocation's verification and the
// catalog row say so. The clock is injected: every time below is T0 + seconds.

const T0 = Math.floor(Date.now() / 1000) * 1000 - 2 * 3_600_000;
const at = (s: number) => new Date(T0 + s * 1000);
const verify = { after_s: 5, every_s: 10, max_tries: 3, absent_after_s: 60, lease_s: 30 };
const takeWork = apiRoutes["/api/v1/verifications"].GET;
const verificationOf = apiRoutes["/api/v1/invocations/{invocation_id}/verification"].GET;
const catalogList = apiRoutes["/api/v1/admin/tool-catalog"].GET;

describe.each<Backend>(["postgres", "pglite"])("verifier liveness on %s", (backend) => {
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
  });

  async function runtimeWithVerifier(name: string) {
    const rt = await createRuntimeKey(t.db, name);
    await addToolCatalogEntry(
      t.db,
      { runtime: rt.runtime, pattern: "create_refund", effect_class: "money", verify },
      "admin@example.com",
    );
    return rt;
  }
  const unknownRefund = (key: string, id: string, s: number) =>
    call(ingest, {
      key,
      body: {
        records: [
          {
            event_id: `${id}-out`,
            task_id: `task-${id}`,
            invocation_id: id,
            attempt: 1,
            tool: "create_refund",
            effect_class: "money",
            idempotency_key: `key-${id}`,
            arguments: { amount: 500 },
            at: at(s).toISOString(),
            envelope: { title: "Gateway Timeout", status: 504 },
          },
        ],
      },
    });
  const read = async (key: string, id: string) =>
    (await call(getInvocation, { key, params: { invocation_id: id } })).body;

  it("hands the call to a person once no worker has asked for a minute, tells the channels, and says why", async () => {
    const rt = await runtimeWithVerifier("idle-agent");
    const channel = await call(channelsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/notifications",
      body: { kind: "slack", url: receiver.url("/idle"), runtimes: [rt.runtime], digest_s: 0 },
    });
    receiver.secrets.set("/idle", channel.body.secret);
    expect((await unknownRefund(rt.key, "i1", 0)).body.accepted).toBe(1);
    await runVerifications(t.db, at(5));
    expect((await read(rt.key, "i1")).status).toBe("verifying");

    // Due at 5 s; a minute (2 × every_s is less) after it with no worker polling: not yet at 64 s, at 65 s.
    expect((await runVerifications(t.db, at(64))).unserved).toBe(0);
    expect((await read(rt.key, "i1")).status).toBe("verifying");
    const panel = await call(verificationOf, { key: rt.key, params: { invocation_id: "i1" } });
    expect(panel.body).toMatchObject({ state: "open", try: 0, serving: { running: false, last_poll_at: null } });

    expect((await runVerifications(t.db, at(65))).unserved).toBe(1);
    const inv = await read(rt.key, "i1");
    // A person decides; the outcome stays unknown.
    expect(inv).toMatchObject({ status: "escalated", commit_state: "unknown" });
    const decision = await call(getDecision, {
      key: rt.key,
      params: { invocation_id: "i1" },
      path: "/api/v1/invocations/i1/decision",
    });
    expect(decision.body.decision).toBe("wait");
    const escalation = inv.actions.find((a: { action: string }) => a.action === "escalate");
    expect(escalation).toMatchObject({ actor: VERIFIER_ACTOR });
    expect(escalation.note).toContain(NO_VERIFIER_RUNNING);
    const view = await call(verificationOf, { key: rt.key, params: { invocation_id: "i1" } });
    expect(view.body).toMatchObject({ state: "gave_up", try: 0 });
    expect(view.body.answers.at(-1)).toMatchObject({ by: VERIFIER_ACTOR, via: "settle", reading: NO_VERIFIER_RUNNING });
    // Once is enough.
    expect((await runVerifications(t.db, at(200))).unserved).toBe(0);

    receiver.setNow(at(66));
    await webhookJob.run(t.db, at(66));
    const told = receiver.received.filter((r) => r.path === "/idle");
    expect(told).toHaveLength(1);
    expect(JSON.parse(told[0]!.body).blocks[1].text.text).toContain(`Escalated (${NO_VERIFIER_RUNNING})`);
  });

  it("a worker that asked within the limit keeps the call with the verifier", async () => {
    const rt = await runtimeWithVerifier("busy-agent");
    const runtimeId = (await t.db.prisma.runtime.findUniqueOrThrow({ where: { name: rt.runtime } })).id;
    await unknownRefund(rt.key, "b1", 1000);
    await runVerifications(t.db, at(1005));
    // Asked 30 s ago (another instance's poll, say): the due ask waits for it, however long it has been due.
    await recordVerifierPoll(t.db.driver, runtimeId, "w1", at(1300));
    expect((await runVerifications(t.db, at(1330))).unserved).toBe(0);
    expect((await read(rt.key, "b1")).status).toBe("verifying");
    const panel = await call(verificationOf, { key: rt.key, params: { invocation_id: "b1" } });
    expect(panel.body.serving).toMatchObject({ push: false, last_poll_at: at(1300).toISOString() });
    // Silent for a minute since: a person decides.
    expect((await runVerifications(t.db, at(1360))).unserved).toBe(1);
    expect((await read(rt.key, "b1")).status).toBe("escalated");
  });

  it("a poll is kept in the database: the catalog row says whether a worker is running", async () => {
    const rt = await runtimeWithVerifier("polled-agent");
    const entryOf = async () =>
      (await call(catalogList, { key: admin.token, path: `/api/v1/admin/tool-catalog?runtime=${rt.runtime}` })).body
        .items[0];
    expect((await entryOf()).serving).toEqual({ running: false, push: false, last_poll_at: null, worker: null });
    const polled = await call(takeWork, { key: rt.key, path: "/api/v1/verifications?worker=night-shift" });
    expect(polled.status).toBe(200);
    const [row] = await t.db.driver.query<{ worker: string; polled_at: Date }>(
      `SELECT p.worker, p.polled_at FROM verifier_polls p JOIN runtimes r ON r.id = p.runtime_id WHERE r.name = $1`,
      [rt.runtime],
    );
    expect(row?.worker).toBe(`runtime:${rt.runtime}/night-shift`);
    const entry = await entryOf();
    expect(entry.serving).toMatchObject({ running: true, push: false, worker: `runtime:${rt.runtime}/night-shift` });
    expect(Date.parse(entry.serving.last_poll_at)).toBe(new Date(row!.polled_at).getTime());
  });

  it("a runtime with a webhook endpoint is served by push: Settle leaves its asks to the webhook", async () => {
    const rt = await runtimeWithVerifier("pushed-agent");
    const endpoint = await call(endpointsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/webhooks",
      body: { runtime: rt.runtime, url: receiver.url("/pushed") },
    });
    expect(endpoint.status).toBe(201);
    await unknownRefund(rt.key, "p1", 2000);
    await runVerifications(t.db, at(2005));
    expect((await runVerifications(t.db, at(2600))).unserved).toBe(0);
    expect((await read(rt.key, "p1")).status).toBe("verifying");
    const panel = await call(verificationOf, { key: rt.key, params: { invocation_id: "p1" } });
    expect(panel.body.serving).toMatchObject({ running: true, push: true });
  });
});
