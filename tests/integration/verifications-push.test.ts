import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as endpointsRoute from "@/app/api/v1/admin/webhooks/route";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { verificationsJob } from "@/lib/jobs/verifications";
import { webhookJob } from "@/lib/jobs/webhooks";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";
import { startReceiver, type Receiver } from "./webhook-receiver";

// Push: a runtime with a webhook endpoint gets each ask as a signed `invocation.verification_requested` event;
// a 2xx answer whose body is a finding answers it, any other 2xx leaves the answer to the API.

const answer = apiRoutes["/api/v1/verifications/{verification_id}"].POST;
const verificationOf = apiRoutes["/api/v1/invocations/{invocation_id}/verification"].GET;
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();

describe.each<Backend>(["postgres", "pglite"])("verifiers by webhook on %s", (backend) => {
  let t: TestContext;
  let receiver: Receiver;
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const tick = async () => {
    receiver.setNow(NOW);
    await verificationsJob.run(t.db, NOW);
    await webhookJob.run(t.db, NOW);
  };
  const unknownRefund = (id: string) =>
    call(ingest, {
      key: t.key,
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
            at: ago(600),
            envelope: { title: "Gateway Timeout", status: 504 },
          },
        ],
      },
    });

  beforeAll(async () => {
    t = await openSettle(backend, { SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    receiver = await startReceiver();
    const admin = await createOperator(t.db, "admin");
    const res = await call(endpointsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/webhooks",
      body: { runtime: t.runtime, url: receiver.url("/hook") },
    });
    receiver.secrets.set("/hook", res.body.secret);
    await addToolCatalogEntry(
      t.db,
      {
        runtime: t.runtime,
        pattern: "create_refund",
        effect_class: "money",
        verify: { after_s: 1, every_s: 60, max_tries: 3, absent_after_s: 60, lease_s: 30 },
      },
      "admin@example.com",
    );
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.teardown();
  });

  it("a 2xx answer carrying a finding settles the call; the event is signed and names the call", async () => {
    receiver.answers.set("/hook", {
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ found: true, evidence: "refund re_77 exists for key-w1", ref: "re_77" }),
    });
    await unknownRefund("w1");
    await tick();
    const events = receiver.received.filter((r) => r.eventType === "invocation.verification_requested");
    expect(events).toHaveLength(1);
    expect(events[0]!.verified).toBe(true);
    expect(events[0]!.event.data).toMatchObject({
      invocation_id: "w1",
      tool: "create_refund",
      idempotency_key: "key-w1",
      arguments: { amount: 500 },
      try: 1,
      max_tries: 3,
      runtime: t.runtime,
    });
    expect(await read("w1")).toMatchObject({ status: "reconciled", commit_state: "committed" });
    const view = (await call(verificationOf, { key: t.key, params: { invocation_id: "w1" } })).body;
    expect(view.answers[0]).toMatchObject({ via: "webhook", found: true, ref: "re_77", by: `runtime:${t.runtime}` });
  });

  it("any other 2xx waits for the API; the pushed ask is leased, so pulling workers do not get it twice", async () => {
    receiver.answers.set("/hook", { status: 202, body: "accepted, will answer" });
    await unknownRefund("w2");
    await tick();
    const event = receiver.received.filter((r) => r.eventType === "invocation.verification_requested").at(-1)!;
    expect(event.event.data.invocation_id).toBe("w2");
    expect((await read("w2")).status).toBe("verifying");
    const pulled = await call(apiRoutes["/api/v1/verifications"].GET, { key: t.key, path: "/api/v1/verifications" });
    expect(pulled.body.items).toEqual([]);
    const res = await call(answer, {
      key: t.key,
      params: { verification_id: event.event.data.id as string },
      body: { found: true, evidence: "found later" },
    });
    expect(res.body).toMatchObject({ state: "settled", reading: "found" });
    expect((await read("w2")).commit_state).toBe("committed");
  });
});
