import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as resendRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/[delivery_id]/resend/route";
import * as deliveriesRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/route";
import * as rotateRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/rotate-secret/route";
import * as endpointRoute from "@/app/api/v1/admin/webhooks/[endpoint_id]/route";
import * as endpointsRoute from "@/app/api/v1/admin/webhooks/route";
import type { Db } from "@/lib/db/client";
import { actOnInvocation } from "@/lib/invocations/act";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { setEnv } from "@/lib/env";
import { SNIPPET_MAX_CHARS } from "@/lib/webhooks/answer";
import { deliverDue, type DeliverOptions } from "@/lib/webhooks/deliver";
import { createWebhookEndpoint } from "@/lib/webhooks/endpoints";
import { fanOutTransitions } from "@/lib/webhooks/fan-out";
import { SERVER_PRIVATE_HINT, type LookupFn } from "@/lib/webhooks/safe-url";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";
import { startReceiver, type Receiver } from "./webhook-receiver";
import { stringifyExactJson } from "@/lib/json/exact";

// Webhook URLs cannot reach Settle's own machine or network (SSRF): refused
// when saved, and again at every try on the address the name has then (DNS
// rebinding), with the POST going to exactly that address. The delivery log
// keeps a short printable snippet of an answer and nothing of a binary one.
// Every change an admin makes to an endpoint is in admin_actions.

const T0 = Math.floor(Date.now() / 1000) * 1000 - 86_400_000;
const at = (s: number) => new Date(T0 + s * 1000);
const answers =
  (...addresses: string[]): LookupFn =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

// Every refusal of a private target says whose setting counts: the sending server's.
const serverHint = `; ${SERVER_PRIVATE_HINT}`;

describe.each<Backend>(["postgres", "pglite"])("webhook SSRF guard on %s", (backend) => {
  let t: TestContext;
  let db: Db;
  let receiver: Receiver;
  let admin: { token: string; user: { email: string } };

  beforeAll(async () => {
    t = await openSettle(backend, { SETTLE_WEBHOOK_ALLOW_PRIVATE: "0", SETTLE_WEBHOOK_MAX_ATTEMPTS: "4" });
    db = t.db;
    receiver = await startReceiver();
    admin = await createOperator(db, "admin");
  });
  afterAll(async () => {
    await receiver?.close();
    setEnv({ SETTLE_WEBHOOK_ALLOW_PRIVATE: undefined });
    await t?.teardown();
  });

  async function withPrivateAllowed<T>(run: () => Promise<T>): Promise<T> {
    setEnv({ SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    try {
      return await run();
    } finally {
      setEnv({ SETTLE_WEBHOOK_ALLOW_PRIVATE: "0" });
    }
  }

  const save = (runtime: string, url: string) =>
    call(endpointsRoute.POST, { key: admin.token, path: "/api/v1/admin/webhooks", body: { runtime, url } });

  /** An endpoint on the local receiver, saved the only way one can be: with private targets allowed. */
  async function addLocalEndpoint(runtime: string, path: string) {
    const res = await withPrivateAllowed(() => save(runtime, receiver.url(path)));
    expect(res.status).toBe(201);
    receiver.secrets.set(path, res.body.secret);
    return res.body.endpoint as { id: string };
  }

  /** One unknown outcome settled by an operator: one delivery per endpoint of the runtime, fanned out at `s`. */
  async function settleOne(key: string, id: string, s: number) {
    const base = {
      task_id: `task-${id}`,
      invocation_id: id,
      tool: "create_invoice",
      effect_class: "create",
      idempotency_key: `k-${id}`,
    };
    const records = [
      { ...base, event_id: `${id}-i`, attempt: 1, phase: "intent", at: at(s - 100).toISOString() },
      {
        ...base,
        event_id: `${id}-o`,
        attempt: 1,
        at: at(s - 95).toISOString(),
        envelope: { title: "Gateway Timeout", status: 504 },
      },
    ];
    expect((await call(ingest, { key, body: { records } })).body.accepted).toBe(2);
    const { version } = await db.prisma.invocation.findFirstOrThrow({ where: { invocationId: id } });
    const action = { action: "mark_reconciled", commit_state: "not_committed", note: "no invoice" } as const;
    expect(
      (await actOnInvocation(db, { invocationId: id }, action, { actor: "ana@example.com", version, now: at(s - 60) }))
        .ok,
    ).toBe(true);
    await fanOutTransitions(db, at(s));
  }

  /** Sends what is due at `s`; the endpoint is disabled afterwards so that later tests' runs leave its deliveries alone. */
  async function sendOnce(endpointId: string, s: number, options: DeliverOptions = {}) {
    receiver.setNow(at(s));
    const sent = await deliverDue(db, at(s), options);
    const delivery = await db.prisma.webhookDelivery.findFirstOrThrow({
      where: { endpointId },
      include: { log: { orderBy: { at: "desc" } } },
    });
    return { sent, delivery, attempt: delivery.log[0]! };
  }
  const runtimeIdOf = async (name: string) => (await db.prisma.runtime.findUniqueOrThrow({ where: { name } })).id;
  const disable = (id: string) => db.prisma.webhookEndpoint.update({ where: { id }, data: { enabled: false } });
  const seen = (path: string) => receiver.received.filter((r) => r.path === path);

  it("refuses to save a URL that reaches loopback, link-local, private or local names: 400 UNSAFE_URL, nothing stored", async () => {
    const rt = await createRuntimeKey(db, "rt-unsafe");
    const unsafe: Array<[url: string, rule: string]> = [
      ["http://127.0.0.1:9/x", "loopback"],
      ["http://169.254.169.254/latest/meta-data", "link-local"],
      ["http://[::1]/", "loopback"],
      ["http://10.0.0.1/", "private"],
      ["http://2130706433/", "loopback"],
      ["http://0x7f.1/", "loopback"],
      ["http://[::ffff:127.0.0.1]/", "loopback"],
      ["http://0.0.0.0:3000/", "unspecified"],
      ["http://192.168.1.1/hook", "private"],
      ["http://[fd00::1]/", "unique-local"],
      ["http://localhost:3000/hook", "local name"],
      ["http://metadata.google.internal/computeMetadata/v1/", "local name"],
    ];
    for (const [url, rule] of unsafe) {
      const res = await save(rt.runtime, url);
      expect(res.status, url).toBe(400);
      expect(res.body, url).toMatchObject({ code: "UNSAFE_URL", safe_details: { field: "url", rule } });
      expect(res.body.agent_message, url).toContain("SETTLE_WEBHOOK_ALLOW_PRIVATE=1");
    }
    const userinfo = await save(rt.runtime, "http://user:pass@example.com/hook");
    expect(userinfo.body).toMatchObject({ code: "UNSAFE_URL", safe_details: { field: "url", rule: "userinfo" } });
    const nowhere = await save(rt.runtime, "https://settle-webhook-test.invalid/hook");
    expect(nowhere.body).toMatchObject({ code: "UNSAFE_URL", safe_details: { field: "url", rule: "unresolvable" } });
    expect(nowhere.body.agent_message).toContain("does not resolve");
    expect(await db.prisma.webhookEndpoint.count({ where: { runtimeId: await runtimeIdOf(rt.runtime) } })).toBe(0);

    // Changing a saved endpoint's URL is checked the same way.
    const ok = await save(rt.runtime, "http://93.184.216.34/hook");
    expect(ok.status).toBe(201);
    await disable(ok.body.endpoint.id);
    const patched = await call(endpointRoute.PATCH, {
      method: "PATCH",
      key: admin.token,
      params: { endpoint_id: ok.body.endpoint.id },
      body: { url: "http://169.254.169.254/" },
    });
    expect(patched).toMatchObject({ status: 400, body: { code: "UNSAFE_URL", safe_details: { field: "url" } } });
    expect((await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: ok.body.endpoint.id } })).url).toBe(
      "http://93.184.216.34/hook",
    );
  });

  it("allows the same URLs with SETTLE_WEBHOOK_ALLOW_PRIVATE=1 (local development), but never user:pass@", async () => {
    const rt = await createRuntimeKey(db, "rt-private-ok");
    await withPrivateAllowed(async () => {
      for (const url of [
        "http://127.0.0.1:9/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/",
        "http://10.0.0.1/",
      ]) {
        const res = await save(rt.runtime, url);
        expect(res.status, url).toBe(201);
        expect(res.body.endpoint.url).toBe(url);
      }
      expect((await save(rt.runtime, "http://user:pass@127.0.0.1/")).body).toMatchObject({
        code: "UNSAFE_URL",
        safe_details: { rule: "userinfo" },
      });
    });
    await db.prisma.webhookEndpoint.updateMany({
      where: { runtimeId: await runtimeIdOf(rt.runtime) },
      data: { enabled: false },
    });
  });

  it("checks the address again at send time: a name that now resolves privately is refused and logged, and nothing is sent", async () => {
    const rt = await createRuntimeKey(db, "rt-rebind");
    const port = new URL(receiver.url()).port;
    // Public when it was saved...
    const { endpoint, secret } = await createWebhookEndpoint(
      db,
      { runtime: rt.runtime, url: `http://hooks.rebind.test:${port}/rebind` },
      admin.user.email,
      {
        lookup: answers("93.184.216.34"),
      },
    );
    receiver.secrets.set("/rebind", secret);
    await settleOne(rt.key, "rebind-1", 100);

    // ...private now.
    const first = await sendOnce(endpoint.id, 100, { lookup: answers("10.0.0.5") });
    expect(first.sent).toMatchObject({ tried: 1, delivered: 0 });
    expect(first.attempt).toMatchObject({
      statusCode: null,
      error: "refused: hooks.rebind.test resolves to a private address (10.0.0.5)" + serverHint,
    });
    expect(first.delivery).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: null });

    // One private answer among public ones is enough.
    const second = await sendOnce(endpoint.id, 200, { lookup: answers("93.184.216.34", "::ffff:127.0.0.1") });
    expect(second.attempt.error).toBe(
      "refused: hooks.rebind.test resolves to a loopback address (::ffff:127.0.0.1)" + serverHint,
    );
    expect(seen("/rebind")).toHaveLength(0);

    const log = await call(deliveriesRoute.GET, { key: admin.token, params: { endpoint_id: endpoint.id } });
    expect(log.body.items[0]).toMatchObject({
      status: "pending",
      attempts: 2,
      last_status_code: null,
      last_error: expect.stringMatching(/^refused: /),
    });

    // The POST goes to the address that was checked, under the URL's name: the name resolves nowhere else.
    const third = await sendOnce(endpoint.id, 400, { allowPrivate: true, lookup: answers("127.0.0.1") });
    expect(third.delivery).toMatchObject({ status: "delivered", attempts: 3, lastStatusCode: 204 });
    expect(seen("/rebind")).toHaveLength(1);
    expect(seen("/rebind")[0]).toMatchObject({ host: `hooks.rebind.test:${port}`, verified: true });
    await disable(endpoint.id);
  });

  it("a literal private address saved while private targets were allowed is refused once they are not", async () => {
    const rt = await createRuntimeKey(db, "rt-flag-off");
    const endpoint = await addLocalEndpoint(rt.runtime, "/flag-off");
    await settleOne(rt.key, "flag-off-1", 1000);
    const { attempt, delivery } = await sendOnce(endpoint.id, 1000);
    expect(attempt).toMatchObject({ statusCode: null, error: "refused: a loopback address (127.0.0.1)" + serverHint });
    expect(delivery.status).toBe("pending");
    expect(seen("/flag-off")).toHaveLength(0);
    await disable(endpoint.id);
  });

  it("a delivery refused at every try ends failed like any other", async () => {
    const rt = await createRuntimeKey(db, "rt-refused");
    const endpoint = await addLocalEndpoint(rt.runtime, "/refused");
    await settleOne(rt.key, "refused-1", 2000);
    for (const s of [2000, 3000, 4000, 5000]) await sendOnce(endpoint.id, s + 20_000);
    const { delivery } = await sendOnce(endpoint.id, 90_000);
    expect(delivery).toMatchObject({
      status: "failed",
      attempts: 4,
      lastError: "refused: a loopback address (127.0.0.1)" + serverHint,
    });
    expect(delivery.log).toHaveLength(4);
    expect(seen("/refused")).toHaveLength(0);
    await disable(endpoint.id);
  });

  const printable = /^[\x20-\x7E…]*$/;

  it.each([
    [
      "a 1 MiB text answer",
      "/huge-text",
      {
        status: 500,
        headers: { "content-type": "text/plain" },
        body: `\x1b[31mdown\x1b[0m\r\n\u0000\u202Eevil\u200B ${"internal secret page ".repeat(52_000)}`,
      },
    ],
    [
      "a 1 MiB JSON answer",
      "/huge-json",
      {
        status: 503,
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ error: "x".repeat(1024 * 1024) }),
      },
    ],
    [
      "an endless text answer",
      "/endless",
      {
        status: 500,
        headers: { "content-type": "text/html" },
        body: "<p>\u0007more</p>\n".repeat(1000),
        endless: true,
      },
    ],
  ] as const)("%s leaves at most 200 printable characters in the log", async (_what, path, canned) => {
    const rt = await createRuntimeKey(db, `rt${path.replaceAll("/", "-")}`);
    const endpoint = await addLocalEndpoint(rt.runtime, path);
    receiver.answers.set(path, { ...canned });
    await settleOne(rt.key, `snip${path.replaceAll("/", "-")}`, 100_000);
    const { attempt, delivery } = await sendOnce(endpoint.id, 100_000, { allowPrivate: true });
    expect(seen(path)).toHaveLength(1);
    expect(attempt.statusCode).toBe(canned.status);
    expect(attempt.error).toMatch(new RegExp(`^HTTP ${canned.status}: `));
    expect(attempt.error!.length).toBeLessThanOrEqual(SNIPPET_MAX_CHARS);
    expect(attempt.error).toMatch(printable);
    expect(delivery.lastError).toBe(attempt.error);
    if (path === "/huge-text")
      expect(attempt.error).toMatch(/^HTTP 500: \[31mdown \[0m evil internal secret page internal/);
    await disable(endpoint.id);
  });

  it.each([
    [
      "with its length",
      "/binary",
      {
        status: 500,
        headers: { "content-type": "application/octet-stream", "content-length": "3072" },
        body: Buffer.alloc(3072, 0x41),
      },
      "HTTP 500: (binary answer, 3 KiB)",
    ],
    [
      "streamed, without a length",
      "/binary-stream",
      { status: 502, headers: { "content-type": "image/png" }, body: Buffer.alloc(64 * 1024, 0x42), endless: true },
      "HTTP 502: (binary answer, 4 KiB or more)",
    ],
    [
      "unlabelled",
      "/unlabelled",
      { status: 500, body: "AAAA plain words without a content type" },
      "HTTP 500: (binary answer, 39 bytes)",
    ],
  ] as const)("a binary answer (%s) stores no body, only its size", async (_what, path, canned, expected) => {
    const rt = await createRuntimeKey(db, `rt${path.replaceAll("/", "-")}`);
    const endpoint = await addLocalEndpoint(rt.runtime, path);
    receiver.answers.set(path, { ...canned });
    await settleOne(rt.key, `bin${path.replaceAll("/", "-")}`, 110_000);
    const { attempt } = await sendOnce(endpoint.id, 110_000, { allowPrivate: true });
    expect(attempt.error).toBe(expected);
    await disable(endpoint.id);
  });

  it("a redirect is not followed: a failed try with its status", async () => {
    const rt = await createRuntimeKey(db, "rt-redirect");
    const endpoint = await addLocalEndpoint(rt.runtime, "/redirect");
    receiver.answers.set("/redirect", {
      status: 302,
      headers: { location: receiver.url("/redirect-target"), "content-type": "text/plain" },
      body: "moved",
    });
    await settleOne(rt.key, "redirect-1", 120_000);
    const { attempt, delivery } = await sendOnce(endpoint.id, 120_000, { allowPrivate: true });
    expect(attempt).toMatchObject({ statusCode: 302, error: "HTTP 302 (redirects are not followed): moved" });
    expect(delivery).toMatchObject({ status: "pending", lastStatusCode: 302 });
    expect(seen("/redirect")).toHaveLength(1);
    expect(seen("/redirect-target")).toHaveLength(0);
    await disable(endpoint.id);
  });

  it("records every admin change to an endpoint in admin_actions, by the admin's email, without the secret", async () => {
    const rt = await createRuntimeKey(db, "rt-audit");
    const endpoint = await addLocalEndpoint(rt.runtime, "/audit");
    const params = { endpoint_id: endpoint.id };
    const newUrl = receiver.url("/audit-2");
    const patched = await withPrivateAllowed(() =>
      call(endpointRoute.PATCH, { method: "PATCH", key: admin.token, params, body: { url: newUrl } }),
    );
    expect(patched.status).toBe(200);
    expect(
      (await call(endpointRoute.PATCH, { method: "PATCH", key: admin.token, params, body: { enabled: false } })).status,
    ).toBe(200);
    const rotated = await call(rotateRoute.POST, { method: "POST", key: admin.token, params });
    expect(rotated.status).toBe(200);
    expect(
      (await call(endpointRoute.PATCH, { method: "PATCH", key: admin.token, params, body: { enabled: true } })).status,
    ).toBe(200);

    receiver.secrets.set("/audit-2", rotated.body.secret);
    await settleOne(rt.key, "audit-1", 130_000);
    await sendOnce(endpoint.id, 130_000, { allowPrivate: true });
    const delivery = await db.prisma.webhookDelivery.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    const resent = await call(resendRoute.POST, {
      method: "POST",
      key: admin.token,
      params: { ...params, delivery_id: delivery.id },
    });
    expect(resent.status).toBe(200);
    expect((await call(endpointRoute.DELETE, { method: "DELETE", key: admin.token, params })).body).toEqual({
      deleted: true,
    });

    const refused = await call(endpointRoute.PATCH, {
      method: "PATCH",
      key: admin.token,
      params,
      body: { enabled: true },
    });
    expect(refused.status).toBe(404);

    const rows = await db.prisma.adminAction.findMany({
      where: { OR: [{ targetId: endpoint.id }, { targetId: delivery.id }] },
      orderBy: { at: "asc" },
    });
    const oldUrl = receiver.url("/audit");
    const snap = (url: string, enabled: boolean) => ({ url, enabled, runtime: rt.runtime });
    expect(
      rows.map((r) => ({
        actor: r.actor,
        action: r.action,
        targetType: r.targetType,
        before: r.before,
        after: r.after,
      })),
    ).toEqual([
      {
        actor: admin.user.email,
        action: "webhook_endpoint_created",
        targetType: "webhook_endpoint",
        before: null,
        after: snap(oldUrl, true),
      },
      {
        actor: admin.user.email,
        action: "webhook_endpoint_updated",
        targetType: "webhook_endpoint",
        before: snap(oldUrl, true),
        after: snap(newUrl, true),
      },
      {
        actor: admin.user.email,
        action: "webhook_endpoint_updated",
        targetType: "webhook_endpoint",
        before: snap(newUrl, true),
        after: snap(newUrl, false),
      },
      {
        actor: admin.user.email,
        action: "webhook_secret_rotated",
        targetType: "webhook_endpoint",
        before: snap(newUrl, false),
        after: snap(newUrl, false),
      },
      {
        actor: admin.user.email,
        action: "webhook_endpoint_updated",
        targetType: "webhook_endpoint",
        before: snap(newUrl, false),
        after: snap(newUrl, true),
      },
      {
        actor: admin.user.email,
        action: "webhook_delivery_resent",
        targetType: "webhook_delivery",
        before: expect.objectContaining({ endpoint_id: endpoint.id, status: "delivered", attempts: 1 }),
        after: expect.objectContaining({ endpoint_id: endpoint.id, status: "pending", attempts: 0 }),
      },
      {
        actor: admin.user.email,
        action: "webhook_endpoint_deleted",
        targetType: "webhook_endpoint",
        before: snap(newUrl, true),
        after: null,
      },
    ]);
    expect(stringifyExactJson(rows)).not.toMatch(/whsec_|secret"/);

    // A refused save is not a change: nothing recorded.
    const before = await db.prisma.adminAction.count();
    expect((await save(rt.runtime, "http://10.0.0.1/")).status).toBe(400);
    expect(await db.prisma.adminAction.count()).toBe(before);
  });
});
