import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as authPost } from "@/app/api/auth/[...all]/route";
import * as auditRoute from "@/app/api/v1/audit/route";
import * as keyRevokeRoute from "@/app/api/v1/admin/runtime-keys/[prefix]/revoke/route";
import * as keysRoute from "@/app/api/v1/admin/runtime-keys/route";
import * as userRoute from "@/app/api/v1/admin/users/[user_id]/route";
import * as usersRoute from "@/app/api/v1/admin/users/route";
import * as policyRoute from "@/app/api/v1/policies/[effect_class]/route";
import { CLIENT_ADDRESS_HEADER, clientIpOf, SOCKET_ADDRESS_HEADER } from "@/lib/identity/client-ip";
import { setEnv } from "@/lib/env";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { listInvocations } from "./routes";

// The findings of the security review, each tried again the way it was found.

const ORIGIN = "http://settle.test";
// What bin/settle-server.mjs sets before the app loads (lib/process-wide.ts keeps it under "serverScript").
const shared = () => ((globalThis as typeof globalThis & { __settle?: Record<string, unknown> }).__settle ??= {});

function signInRequest(email: string, password: string, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
    body: JSON.stringify({ email, password }),
  });
}

async function signIn(email: string, password: string): Promise<string> {
  const res = await authPost(signInRequest(email, password));
  expect(res.status).toBe(200);
  return res.headers
    .getSetCookie()
    .find((c) => c.includes("session_token"))!
    .split(";")[0]!;
}

describe("security: sign-in, admin surface, tokens, audit", () => {
  let t: TestContext;
  let admin: Awaited<ReturnType<typeof createOperator>>;
  beforeAll(async () => {
    t = await openSettle("postgres", { SETTLE_SIGN_IN_ACCOUNT_LIMIT: "5" });
    admin = await createOperator(t.db, "admin");
  });
  afterAll(async () => {
    setEnv({ SETTLE_SIGN_IN_ACCOUNT_LIMIT: undefined });
    await t?.teardown();
  });

  it("failed sign-ins lock the account whatever address they come from, and an unknown email reads the same", async () => {
    const ana = await createOperator(t.db, "operator");
    const answers = [];
    for (let i = 0; i < 7; i += 1) {
      const res = await authPost(
        signInRequest(ana.user.email, "wrong password!", { "x-forwarded-for": `198.51.100.${i}` }),
      );
      answers.push({ status: res.status, body: await res.json() });
    }
    expect(answers.slice(0, 5).map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    expect(answers[5]).toMatchObject({
      status: 429,
      body: {
        code: "RATE_LIMITED",
        agent_message: expect.stringMatching(/Too many failed sign-ins for this account\. Try again in 15 minutes/),
      },
    });
    // Locked means locked: the right password is refused too, until the window ends.
    const right = await authPost(signInRequest(ana.user.email, ana.password));
    expect(right.status).toBe(429);

    const nobody = [];
    for (let i = 0; i < 6; i += 1)
      nobody.push((await authPost(signInRequest("nobody@example.com", "wrong password!"))).status);
    expect(nobody).toEqual([401, 401, 401, 401, 401, 429]);

    await t.db.prisma.signInFailure.updateMany({ data: { lockedUntil: new Date(Date.now() - 1000) } });
    expect((await authPost(signInRequest(ana.user.email, ana.password))).status).toBe(200);
    expect(
      await t.db.prisma.signInFailure.count({ where: { failures: { gt: 0 }, lockedUntil: { gt: new Date() } } }),
    ).toBe(0);
  });

  it("Better Auth sees the address Settle computed from the socket, never the client's headers", async () => {
    const op = await createOperator(t.db, "operator");
    const spoofed = {
      [SOCKET_ADDRESS_HEADER]: "203.0.113.5",
      "x-forwarded-for": "1.2.3.4",
      [CLIENT_ADDRESS_HEADER]: "9.9.9.9",
    };
    const sessionIp = async () => {
      expect((await authPost(signInRequest(op.user.email, op.password, spoofed))).status).toBe(200);
      const latest = await t.db.prisma.session.findFirstOrThrow({
        where: { userId: op.user.id },
        orderBy: { createdAt: "desc" },
      });
      return latest.ipAddress;
    };
    // Not started through bin/settle-server.mjs: the socket header is a client's and means nothing.
    delete shared().serverScript;
    expect(["203.0.113.5", "1.2.3.4", "9.9.9.9"]).not.toContain(await sessionIp());
    shared().serverScript = true;
    try {
      expect(await sessionIp()).toBe("203.0.113.5");
      setEnv({ SETTLE_TRUSTED_PROXIES: "203.0.113.0/24" });
      expect(await sessionIp()).toBe("1.2.3.4");
      setEnv({ SETTLE_TRUSTED_PROXIES: "not-a-cidr" });
      expect(() => clientIpOf(new Headers(spoofed))).toThrow(/SETTLE_TRUSTED_PROXIES.*not an IP address or CIDR/s);
    } finally {
      delete shared().serverScript;
      setEnv({ SETTLE_TRUSTED_PROXIES: undefined });
    }
  });

  it.each([
    "impersonate-user",
    "set-role",
    "ban-user",
    "unban-user",
    "list-users",
    "create-user",
    "remove-user",
    "set-user-password",
    "revoke-user-sessions",
  ])("Better Auth's admin endpoint %s answers 404, even to an admin", async (endpoint) => {
    const cookie = await signIn(admin.user.email, admin.password);
    const res = await authPost(
      new Request(`${ORIGIN}/api/auth/admin/${endpoint}`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN, cookie },
        body: JSON.stringify({ userId: admin.user.id, role: "admin" }),
      }),
    );
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ ok: false, code: "NOT_FOUND" });
  });

  it("an impersonation session is refused everywhere, however it was made", async () => {
    const op = await createOperator(t.db, "operator");
    const cookie = await signIn(op.user.email, op.password);
    expect((await call(listInvocations, { headers: { cookie }, path: "/api/v1/invocations" })).status).toBe(200);
    await t.db.prisma.session.updateMany({ where: { userId: op.user.id }, data: { impersonatedBy: admin.user.id } });
    const res = await call(listInvocations, { headers: { cookie }, path: "/api/v1/invocations" });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHENTICATED");
  });

  it("an expired token answers 401 TOKEN_EXPIRED with when it expired", async () => {
    const op = await createOperator(t.db, "operator");
    await t.db.prisma.personalToken.updateMany({
      where: { userId: op.user.id },
      data: { expiresAt: new Date("2026-01-01T00:00:00Z") },
    });
    const res = await call(listInvocations, { key: op.token, path: "/api/v1/invocations" });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "TOKEN_EXPIRED", safe_details: { expired_at: "2026-01-01T00:00:00.000Z" } });
  });

  it("deactivating revokes tokens for good: reactivating does not bring them back", async () => {
    const op = await createOperator(t.db, "operator");
    const as = { key: admin.token };
    expect(
      (
        await call(userRoute.PATCH, {
          ...as,
          method: "PATCH",
          params: { user_id: op.user.id },
          body: { active: false },
        })
      ).status,
    ).toBe(200);
    expect(
      (await call(userRoute.PATCH, { ...as, method: "PATCH", params: { user_id: op.user.id }, body: { active: true } }))
        .status,
    ).toBe(200);
    expect((await call(listInvocations, { key: op.token, path: "/api/v1/invocations" })).body.code).toBe("KEY_REVOKED");
  });

  it("every admin action is in the audit trail with before and after, in the page and the CSV", async () => {
    const as = { key: admin.token };
    const invited = await call(usersRoute.POST, {
      ...as,
      path: "/api/v1/admin/users",
      body: { email: "zed@example.com", role: "viewer" },
    });
    expect(invited.status).toBe(201);
    const zed = invited.body.user.id as string;
    await call(userRoute.PATCH, { ...as, method: "PATCH", params: { user_id: zed }, body: { role: "operator" } });
    await call(userRoute.PATCH, { ...as, method: "PATCH", params: { user_id: zed }, body: { active: false } });
    const key = await call(keysRoute.POST, {
      ...as,
      path: "/api/v1/admin/runtime-keys",
      body: { runtime: "audited", name: "ci" },
    });
    await call(keyRevokeRoute.POST, { ...as, method: "POST", params: { prefix: key.body.prefix } });
    await call(policyRoute.PUT, {
      ...as,
      method: "PUT",
      params: { effect_class: "money" },
      body: { overdue_after_s: 600, escalate_after_s: 3600, approval_expires_after_s: 86400, approval_quorum: 2 },
    });

    const page = await call(auditRoute.GET, { ...as, path: "/api/v1/audit?limit=200" });
    expect(page.status).toBe(200);
    const admins = page.body.items.filter(
      (e: { kind: string; actor: string }) => e.kind === "admin" && e.actor === admin.user.email,
    );
    const byAction = (action: string) => admins.find((e: { action: string }) => e.action === action);
    expect(byAction("user_invited")).toMatchObject({
      target_type: "user",
      target_id: "zed@example.com",
      before: null,
      after: { role: "viewer", active: true },
    });
    expect(byAction("user_role_changed")).toMatchObject({ before: { role: "viewer" }, after: { role: "operator" } });
    expect(byAction("user_deactivated")).toMatchObject({ before: { active: true }, after: { active: false } });
    expect(byAction("runtime_key_created")).toMatchObject({
      target_id: key.body.prefix,
      after: { runtime: "audited", name: "ci" },
    });
    expect(byAction("runtime_key_revoked")).toMatchObject({
      before: { revoked_at: null },
      after: { revoked_at: expect.any(String) },
    });
    expect(byAction("policy_changed")).toMatchObject({
      target_type: "policy",
      target_id: "money",
      after: { approval_quorum: 2 },
    });
    expect(JSON.stringify(page.body)).not.toContain(key.body.key);

    const filtered = await call(auditRoute.GET, { ...as, path: "/api/v1/audit?action=user_role_changed" });
    expect(filtered.body.items.map((e: { action: string }) => e.action)).toEqual(["user_role_changed"]);

    const csv = await auditRoute.GET(
      new Request(`${ORIGIN}/api/v1/audit?format=csv`, { headers: { authorization: `Bearer ${admin.token}` } }),
    );
    const text = await csv.text();
    expect(text.split("\r\n")[0]).toContain("kind,actor,action");
    expect(text).toMatch(
      /admin,[^,]+,user_role_changed,(,){12}user,zed@example\.com,"\{.*""role"": ?""viewer"".*\}","\{.*""role"": ?""operator""/,
    );
  });
});

describe("security: sign-in from another address than SETTLE_PUBLIC_URL", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres", { SETTLE_PUBLIC_URL: "http://127.0.0.1:3000" });
  });
  afterAll(async () => {
    setEnv({ SETTLE_PUBLIC_URL: undefined });
    await t?.teardown();
  });

  it("explains which address to open, or what to set, instead of a bare 'Invalid origin'", async () => {
    const op = await createOperator(t.db, "operator");
    const res = await authPost(
      new Request("http://localhost:3000/api/auth/sign-in/email", {
        method: "POST",
        headers: { "content-type": "application/json", origin: "http://localhost:3000", cookie: "x=1" },
        body: JSON.stringify({ email: op.user.email, password: op.password }),
      }),
    );
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body).toMatchObject({
      code: "INVALID_ORIGIN",
      safe_details: { expected_origin: "http://127.0.0.1:3000", origin: "http://localhost:3000" },
    });
    expect(body.agent_message).toContain(
      "Open http://127.0.0.1:3000/sign-in, or set SETTLE_PUBLIC_URL=http://localhost:3000",
    );
  });
});

describe("security: JSON bodies are limited on the stream", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("pglite");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("refuses a body over 64 KiB by its Content-Length, and one without it at the chunk that crosses the limit", async () => {
    const admin = await createOperator(t.db, "admin");
    const big = await call(usersRoute.POST, {
      key: admin.token,
      path: "/api/v1/admin/users",
      raw: JSON.stringify({ email: "x".repeat(70_000) }),
    });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("PAYLOAD_TOO_LARGE");

    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new TextEncoder().encode(`"${"y".repeat(16_382)}",`));
      },
      cancel() {
        cancelled = true;
      },
    });
    const res = await usersRoute.POST(
      new Request("http://settle.test/api/v1/admin/users", {
        method: "POST",
        headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
        body: endless,
        duplex: "half",
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);
  });
});
