import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as deliveryRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/[delivery_id]/route";
import * as resendRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/[delivery_id]/resend/route";
import * as deliveriesRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/route";
import * as rotateRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/rotate-secret/route";
import * as endpointRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/route";
import * as endpointsRoute from "@/app/api/v1/admin/webhooks/route";
import { openApiDocument } from "@/server/openapi";
import { closeDb, getDb, type Db } from "@/lib/db/client";
import { createPostgresDriver } from "@/lib/db/driver";
import { PrismaClient } from "@/lib/db/generated/client";
import { actOnInvocation } from "@/lib/invocations/act";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { env } from "@/lib/env";
import { runJobsOnce } from "@/lib/jobs/scheduler";
import { webhookJob } from "@/lib/jobs/webhooks";
import { deliverDue } from "@/lib/webhooks/deliver";
import { fanOutTransitions } from "@/lib/webhooks/fan-out";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";
import { startReceiver, type Receiver } from "./webhook-receiver";

// Webhooks end to end: a settlement becomes one signed delivery per endpoint,
// retried with back-off from the outbox, surviving a dead instance, never sent
// twice by two instances, with a delivery log and Resend.

// A day ago, so that the times tests choose and the wall clock (Resend uses it) stay in order.
const T0 = Math.floor(Date.now() / 1000) * 1000 - 86_400_000;
const at = (s: number) => new Date(T0 + s * 1000);

describe.each<Backend>(["postgres", "pglite"])("webhooks on %s", (backend) => {
  let t: TestContext;
  let db: Db;
  let receiver: Receiver;
  let admin: { token: string; user: { email: string } };

  beforeAll(async () => {
    // The default 10 s timeout: a short one would make a busy machine's slow answers count as failures.
    // The receiver listens on 127.0.0.1, which only SETTLE_WEBHOOK_ALLOW_PRIVATE lets Settle reach.
    t = await openSettle(backend, { SETTLE_WEBHOOK_MAX_ATTEMPTS: "4", SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    db = t.db;
    receiver = await startReceiver();
    admin = await createOperator(db, "admin");
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.teardown();
  });

  /** Runs the webhook job as the scheduler would, at a time the test chooses (the receiver's clock follows). */
  async function runAt(now: Date, on: Db = db) {
    receiver.setNow(now);
    return webhookJob.run(on, now) as Promise<{
      fanned: { deliveries: number };
      sent: { tried: number; delivered: number };
    }>;
  }

  async function addEndpoint(runtime: string, path: string) {
    const res = await call(endpointsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/webhooks",
      body: { runtime, url: receiver.url(path) },
    });
    expect(res.status).toBe(201);
    receiver.secrets.set(path, res.body.secret);
    return res.body.endpoint as { id: string };
  }

  /** Unknown outcomes that an operator settles as not committed: one `invocation.settled` event each. */
  async function settle(key: string, ids: string | string[], when: Date) {
    const list = typeof ids === "string" ? [ids] : ids;
    const records = list.flatMap((id) => {
      const base = {
        task_id: `task-${id}`,
        invocation_id: id,
        tool: "create_invoice",
        effect_class: "create",
        idempotency_key: `k-${id}`,
      };
      return [
        { ...base, event_id: `${id}-i`, attempt: 1, phase: "intent", at: when.toISOString() },
        {
          ...base,
          event_id: `${id}-o`,
          attempt: 1,
          at: new Date(when.getTime() + 5000).toISOString(),
          envelope: { title: "Gateway Timeout", status: 504 },
        },
      ];
    });
    const res = await call(ingest, { key, body: { records } });
    expect(res.body.accepted).toBe(records.length);
    for (const id of list) {
      const { version } = await db.prisma.invocation.findFirstOrThrow({ where: { invocationId: id } });
      const action = { action: "mark_reconciled", commit_state: "not_committed", note: "no invoice" } as const;
      const done = await actOnInvocation(db, { invocationId: id }, action, {
        actor: "ana@example.com",
        version,
        now: new Date(when.getTime() + 60_000),
      });
      expect(done.ok).toBe(true);
    }
  }

  const seen = (path: string) => receiver.received.filter((r) => r.path === path);

  it("admin API: secret answered once, never listed; http(s) only; only admins", async () => {
    const rt = await createRuntimeKey(db, "rt-admin");
    const created = await call(endpointsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/webhooks",
      body: { runtime: rt.runtime, url: receiver.url("/admin") },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.body.endpoint).toMatchObject({
      runtime: "rt-admin",
      enabled: true,
      deliveries: { pending: 0, delivered: 0, failed: 0 },
    });
    const list = await call(endpointsRoute.GET, { key: admin.token, path: "/api/v1/admin/webhooks" });
    expect(list.body.items.map((e: { id: string }) => e.id)).toContain(created.body.endpoint.id);
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);

    for (const url of ["ftp://example.com/hook", "javascript:alert(1)", "not a url"]) {
      const bad = await call(endpointsRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/webhooks",
        body: { runtime: rt.runtime, url },
      });
      expect(bad.status, url).toBe(400);
    }
    const noRuntime = await call(endpointsRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/webhooks",
      body: { runtime: "nobody", url: receiver.url() },
    });
    expect(noRuntime.body).toMatchObject({ code: "INVALID_REQUEST", safe_details: { path: "runtime" } });

    const operator = await createOperator(db, "manager");
    expect((await call(endpointsRoute.GET, { key: operator.token, path: "/api/v1/admin/webhooks" })).status).toBe(403);
    expect(
      (
        await call(rotateRoute.POST, {
          method: "POST",
          key: operator.token,
          params: { endpoint_id: created.body.endpoint.id },
        })
      ).status,
    ).toBe(403);

    const rotated = await call(rotateRoute.POST, {
      method: "POST",
      key: admin.token,
      params: { endpoint_id: created.body.endpoint.id },
    });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    const disabled = await call(endpointRoute.PATCH, {
      method: "PATCH",
      key: admin.token,
      params: { endpoint_id: created.body.endpoint.id },
      body: { enabled: false },
    });
    expect(disabled.body.enabled).toBe(false);
    const gone = await call(endpointRoute.DELETE, {
      method: "DELETE",
      key: admin.token,
      params: { endpoint_id: created.body.endpoint.id },
    });
    expect(gone.body).toEqual({ deleted: true });
    const again = await call(endpointRoute.GET, {
      key: admin.token,
      params: { endpoint_id: created.body.endpoint.id },
    });
    expect(again.status).toBe(404);
  });

  it("a settlement becomes exactly one signed delivery per enabled endpoint of its runtime", async () => {
    const rt = await createRuntimeKey(db, "rt-fan");
    const other = await createRuntimeKey(db, "rt-other");
    const a = await addEndpoint(rt.runtime, "/fan-a");
    await addEndpoint(rt.runtime, "/fan-b");
    const off = await addEndpoint(rt.runtime, "/fan-off");
    await call(endpointRoute.PATCH, {
      method: "PATCH",
      key: admin.token,
      params: { endpoint_id: off.id },
      body: { enabled: false },
    });
    await addEndpoint(other.runtime, "/fan-other");

    await settle(rt.key, "fan-1", at(0));
    const first = await runAt(at(120));
    expect(first.fanned.deliveries).toBe(2);
    await runAt(at(125));
    await runAt(at(3600));

    const got = [...seen("/fan-a"), ...seen("/fan-b")];
    expect(got).toHaveLength(2);
    expect(seen("/fan-off")).toHaveLength(0);
    expect(seen("/fan-other")).toHaveLength(0);
    expect(got.every((r) => r.verified)).toBe(true);
    expect(new Set(got.map((r) => r.eventId)).size).toBe(1);
    expect(got[0]!.eventType).toBe("invocation.settled");
    expect(got[0]!.event).toMatchObject({
      id: got[0]!.eventId,
      type: "invocation.settled",
      data: {
        invocation_id: "fan-1",
        status: "reconciled",
        decision: "retry_allowed",
        commit_state: "not_committed",
        decided_by: "ana@example.com",
        decided_at: at(60).toISOString(),
        previous_decision: "wait",
        from_status: "outcome_unknown",
        to_status: "reconciled",
        task_id: "task-fan-1",
        tool: "create_invoice",
        idempotency_key: "k-fan-1",
        runtime: "rt-fan",
      },
    });
    expect(await db.prisma.invocationTransition.count({ where: { fannedOut: false } })).toBe(0);
    const log = await call(deliveriesRoute.GET, { key: admin.token, params: { endpoint_id: a.id } });
    expect(log.body.items).toEqual([
      expect.objectContaining({
        status: "delivered",
        attempts: 1,
        last_status_code: 204,
        invocation_id: "fan-1",
        next_attempt_at: null,
      }),
    ]);
  });

  it("a failing receiver is retried with exponential back-off until it answers; the log shows every try", async () => {
    const rt = await createRuntimeKey(db, "rt-retry");
    const endpoint = await addEndpoint(rt.runtime, "/retry");
    await settle(rt.key, "retry-1", at(0));
    receiver.failNext(2);

    await runAt(at(100));
    const first = await db.prisma.webhookDelivery.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    expect(first).toMatchObject({
      status: "pending",
      attempts: 1,
      lastStatusCode: 500,
      lastError: "HTTP 500: receiver is down",
    });
    const wait1 = (first.nextAttemptAt.getTime() - at(100).getTime()) / 1000;
    expect(wait1).toBeGreaterThanOrEqual(24);
    expect(wait1).toBeLessThanOrEqual(36);

    await runAt(at(110)); // not due yet
    expect(seen("/retry")).toHaveLength(1);

    await runAt(at(140));
    const second = await db.prisma.webhookDelivery.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    expect(second.attempts).toBe(2);
    const wait2 = (second.nextAttemptAt.getTime() - at(140).getTime()) / 1000;
    expect(wait2).toBeGreaterThanOrEqual(48);
    expect(wait2).toBeLessThanOrEqual(72);

    await runAt(at(220));
    expect(seen("/retry")).toHaveLength(3);
    expect(new Set(seen("/retry").map((r) => r.body)).size).toBe(1); // every try sends the same bytes
    const page = await call(deliveriesRoute.GET, { key: admin.token, params: { endpoint_id: endpoint.id } });
    const delivery = page.body.items[0];
    expect(delivery).toMatchObject({
      status: "delivered",
      attempts: 3,
      last_status_code: 204,
      delivered_at: at(220).toISOString(),
    });
    const detail = await call(deliveryRoute.GET, {
      key: admin.token,
      params: { endpoint_id: endpoint.id, delivery_id: delivery.id },
    });
    expect(detail.body.attempts.map((a: { status_code: number; at: string }) => [a.status_code, a.at])).toEqual([
      [204, at(220).toISOString()],
      [500, at(140).toISOString()],
      [500, at(100).toISOString()],
    ]);
    expect(detail.body.payload).toMatchObject({ type: "invocation.settled", data: { invocation_id: "retry-1" } });
  });

  it("gives up after the last attempt, and Resend starts the delivery over and records who pressed it", async () => {
    const rt = await createRuntimeKey(db, "rt-giveup");
    const endpoint = await addEndpoint(rt.runtime, "/giveup");
    await settle(rt.key, "giveup-1", at(0));
    receiver.failNext(4);
    for (const s of [100, 1000, 2000, 3000]) await runAt(at(s));
    const failed = await db.prisma.webhookDelivery.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    expect(failed).toMatchObject({ status: "failed", attempts: 4 });
    await runAt(at(90_000));
    expect(seen("/giveup")).toHaveLength(4);

    const operator = await createOperator(db, "operator");
    const refused = await call(resendRoute.POST, {
      method: "POST",
      key: operator.token,
      params: { endpoint_id: endpoint.id, delivery_id: failed.id },
    });
    expect(refused.status).toBe(403);
    const resent = await call(resendRoute.POST, {
      method: "POST",
      key: admin.token,
      params: { endpoint_id: endpoint.id, delivery_id: failed.id },
    });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ status: "pending", attempts: 0, resent_by: admin.user.email });
    await runAt(new Date(Date.now() + 1000));
    expect(seen("/giveup")).toHaveLength(5);
    const detail = await call(deliveryRoute.GET, {
      key: admin.token,
      params: { endpoint_id: endpoint.id, delivery_id: failed.id },
    });
    expect(detail.body.delivery).toMatchObject({ status: "delivered", attempts: 1 });
    expect(detail.body.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([204, 500, 500, 500, 500]);

    const wrongEndpoint = await call(resendRoute.POST, {
      method: "POST",
      key: admin.token,
      params: { endpoint_id: (await addEndpoint(rt.runtime, "/giveup-2")).id, delivery_id: failed.id },
    });
    expect(wrongEndpoint.status).toBe(404);
  });

  it("a receiver that does not answer within the timeout is a failed try without a status code", async () => {
    const rt = await createRuntimeKey(db, "rt-slow");
    const endpoint = await addEndpoint(rt.runtime, "/slow");
    await settle(rt.key, "slow-1", at(0));
    await fanOutTransitions(db, at(100));
    receiver.delayMs(1000);
    receiver.setNow(at(100));
    await deliverDue(db, at(100), { timeoutMs: 300 });
    receiver.delayMs(0);
    const slow = await db.prisma.webhookAttempt.findFirstOrThrow({ where: { delivery: { endpointId: endpoint.id } } });
    expect(slow).toMatchObject({ statusCode: null, error: "No answer within 300 ms." });
    expect(slow.durationMs).toBeGreaterThanOrEqual(250);
    await runAt(at(200));
    expect((await db.prisma.webhookDelivery.findFirstOrThrow({ where: { endpointId: endpoint.id } })).status).toBe(
      "delivered",
    );
  });

  it("a rotated secret signs the deliveries after it", async () => {
    const rt = await createRuntimeKey(db, "rt-rotate");
    const endpoint = await addEndpoint(rt.runtime, "/rotate");
    const rotated = await call(rotateRoute.POST, {
      method: "POST",
      key: admin.token,
      params: { endpoint_id: endpoint.id },
    });
    const old = receiver.secrets.get("/rotate")!;
    receiver.secrets.set("/rotate", rotated.body.secret);
    await settle(rt.key, "rotate-1", at(0));
    await runAt(at(100));
    expect(seen("/rotate").map((r) => r.verified)).toEqual([true]);
    expect(old).not.toBe(rotated.body.secret);
  });

  it("a delivery claimed by an instance that died is sent once its lease runs out (after a restart on PostgreSQL)", async () => {
    const rt = await createRuntimeKey(db, "rt-crash");
    const endpoint = await addEndpoint(rt.runtime, "/crash");
    await settle(rt.key, "crash-1", at(0));
    await fanOutTransitions(db, at(100));
    // The dying instance claims the delivery and never finishes its POST.
    void deliverDue(db, at(100), { post: () => new Promise<Response>(() => {}) });
    await expect
      .poll(
        async () =>
          (await db.prisma.webhookDelivery.findFirstOrThrow({ where: { endpointId: endpoint.id } })).lockedUntil,
      )
      .not.toBeNull();
    if (backend === "postgres") {
      await closeDb();
      db = await getDb();
    }
    await runAt(at(130));
    expect(seen("/crash")).toHaveLength(0);
    await runAt(at(100 + 10 + 61)); // past the lease: the timeout and a minute
    expect(seen("/crash")).toHaveLength(1);
    expect(seen("/crash")[0]!.verified).toBe(true);
    const row = await db.prisma.webhookDelivery.findFirstOrThrow({
      where: { endpointId: endpoint.id },
      include: { log: true },
    });
    expect(row).toMatchObject({ status: "delivered", attempts: 1, lockedUntil: null });
    expect(row.log).toHaveLength(1);
  });

  it("an endpoint deleted while its delivery is in flight ends the try quietly", async () => {
    const rt = await createRuntimeKey(db, "rt-deleted");
    const endpoint = await addEndpoint(rt.runtime, "/deleted");
    await settle(rt.key, "deleted-1", at(0));
    await fanOutTransitions(db, at(100));
    const post = async () => {
      await call(endpointRoute.DELETE, { method: "DELETE", key: admin.token, params: { endpoint_id: endpoint.id } });
      return new Response(null, { status: 204 });
    };
    await expect(deliverDue(db, at(100), { post })).resolves.toMatchObject({ tried: 1, delivered: 0 });
    expect(await db.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(0);
  });

  it.runIf(backend === "postgres")("two instances running the job at once never send an event twice", async () => {
    const second = createPostgresDriver(env().DATABASE_URL!, 5);
    const other: Db = { prisma: new PrismaClient({ adapter: new PrismaPg(second.pool!) }), driver: second };
    try {
      const rt = await createRuntimeKey(db, "rt-race");
      const endpoint = await addEndpoint(rt.runtime, "/race");
      await settle(
        rt.key,
        Array.from({ length: 20 }, (_, i) => `race-${i}`),
        at(0),
      );
      // Small batches, so both instances keep claiming while the other is busy.
      receiver.setNow(at(200));
      const fanned = await Promise.all([
        fanOutTransitions(db, at(200), { batch: 3 }),
        fanOutTransitions(other, at(200), { batch: 3 }),
      ]);
      expect(fanned[0].deliveries + fanned[1].deliveries).toBe(20);
      receiver.delayMs(20);
      const sent = await Promise.all([
        deliverDue(db, at(200), { batch: 3, maxBatches: 20 }),
        deliverDue(other, at(200), { batch: 3, maxBatches: 20 }),
      ]);
      receiver.delayMs(0);
      expect(sent[0].tried + sent[1].tried).toBe(20);
      const ids = seen("/race").map((r) => r.eventId);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
      expect(await db.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id, status: "delivered" } })).toBe(
        20,
      );
    } finally {
      await other.prisma.$disconnect();
      await second.close();
    }
  });

  it("the scheduler's runJobsOnce runs the webhook job", async () => {
    const rt = await createRuntimeKey(db, "rt-registry");
    await addEndpoint(rt.runtime, "/registry");
    await settle(rt.key, "registry-1", at(0));
    receiver.setNow(at(100));
    await runJobsOnce(db, at(100));
    expect(seen("/registry")).toHaveLength(1);
  });
});

describe("webhooks in the OpenAPI document", () => {
  it("declares the admin routes and the events Settle sends, every $ref resolving", async () => {
    const doc = openApiDocument();
    for (const path of [
      "/api/v1/admin/webhooks",
      "/api/v1/admin/webhooks/{endpoint_id}",
      "/api/v1/admin/webhooks/{endpoint_id}/rotate-secret",
      "/api/v1/admin/webhooks/{endpoint_id}/deliveries",
      "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}",
      "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend",
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(Object.keys(doc.webhooks)).toEqual(["invocation.settled", "invocation.decision_changed"]);
    const schemas = doc.components.schemas as Record<string, { properties?: Record<string, unknown> }>;
    expect(Object.keys(schemas.WebhookEvent!.properties!)).toEqual(["id", "type", "created_at", "data"]);
    expect(JSON.stringify(schemas.WebhookEndpoint)).not.toContain("secret");
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    for (const id of refs) expect(Object.keys(schemas)).toContain(id);
  });
});
