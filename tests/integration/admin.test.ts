import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as authPost } from "@/app/api/auth/[...all]/route";
import * as keyRevokeRoute from "@/app/api/v1/admin/runtime-keys/[prefix]/revoke/route";
import * as keysRoute from "@/app/api/v1/admin/runtime-keys/route";
import * as userRoute from "@/app/api/v1/admin/users/[user_id]/route";
import * as usersRoute from "@/app/api/v1/admin/users/route";
import * as tokenRevokeRoute from "@/app/api/v1/me/tokens/[prefix]/revoke/route";
import * as tokensRoute from "@/app/api/v1/me/tokens/route";
import { updateUser } from "@/lib/identity/users";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { ingest, listInvocations } from "./routes";

const ORIGIN = "http://settle.test";

async function signIn(email: string, password: string): Promise<string | null> {
  const res = await authPost(
    new Request(`${ORIGIN}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ email, password }),
    }),
  );
  if (res.status !== 200) return null;
  return (
    res.headers
      .getSetCookie()
      .find((c) => c.includes("session_token"))
      ?.split(";")[0] ?? null
  );
}

const asSession = (cookie: string) => ({ headers: { cookie, origin: ORIGIN } });

describe("admin: users, runtime keys and personal access tokens", () => {
  let t: TestContext;
  let admin: Awaited<ReturnType<typeof createOperator>>;
  beforeAll(async () => {
    t = await openSettle("postgres");
    admin = await createOperator(t.db, "admin", "root@example.com");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  describe("users", () => {
    it("creates a user with a given password: it is not echoed, and they can sign in with it", async () => {
      const res = await call(usersRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/users",
        body: { email: "Given@Example.com", role: "operator", password: "a given password" },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        user: { email: "given@example.com", role: "operator", active: true },
        password: null,
      });
      expect(await signIn("given@example.com", "a given password")).toMatch(/session_token=/);
    });

    it("creates a user without a password: one is generated, answered once, and works", async () => {
      const res = await call(usersRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/users",
        body: { email: "gen@example.com", role: "viewer", name: "Gen" },
      });
      expect(res.status).toBe(201);
      expect(res.body.user).toMatchObject({ email: "gen@example.com", name: "Gen", role: "viewer", active: true });
      expect(res.body.password).toMatch(/^\S{12,}$/);
      expect(await signIn("gen@example.com", res.body.password)).toMatch(/session_token=/);
      const list = await call(usersRoute.GET, { key: admin.token, path: "/api/v1/admin/users" });
      expect(JSON.stringify(list.body)).not.toContain(res.body.password);
      expect(list.body.items.map((u: { email: string }) => u.email)).toEqual(
        expect.arrayContaining(["root@example.com", "gen@example.com"]),
      );
    });

    it("refuses an email already in use (409), and a bad role or short password (400)", async () => {
      const dup = await call(usersRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/users",
        body: { email: "gen@example.com", role: "viewer" },
      });
      expect(dup.status).toBe(409);
      expect(dup.body).toMatchObject({ ok: false, code: "USER_EXISTS", safe_details: { field: "email" } });
      const role = await call(usersRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/users",
        body: { email: "x@example.com", role: "boss" },
      });
      expect(role.body.code).toBe("INVALID_REQUEST");
      const short = await call(usersRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/users",
        body: { email: "y@example.com", role: "viewer", password: "short" },
      });
      expect(short.body.code).toBe("INVALID_REQUEST");
      expect(await t.db.prisma.user.count({ where: { email: { in: ["x@example.com", "y@example.com"] } } })).toBe(0);
    });

    it("changes a role, which takes effect on the person's next request", async () => {
      const bo = await createOperator(t.db, "viewer");
      const changed = await call(userRoute.PATCH, {
        method: "PATCH",
        key: admin.token,
        params: { user_id: bo.user.id },
        body: { role: "operator" },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ id: bo.user.id, role: "operator", active: true });
      const mine = await call(tokensRoute.GET, { key: bo.token, path: "/api/v1/me/tokens" });
      expect(mine.status).toBe(200);
      const asAdmin = await call(usersRoute.GET, { key: bo.token, path: "/api/v1/admin/users" });
      expect(asAdmin.status).toBe(403);
    });

    it("deactivating ends the person's sessions and revokes their tokens; reactivating lets them sign in again, not the old token", async () => {
      const cy = await createOperator(t.db, "operator");
      const cookie = (await signIn(cy.user.email, cy.password))!;
      expect((await call(listInvocations, { headers: { cookie }, path: "/api/v1/invocations" })).status).toBe(200);
      expect((await call(listInvocations, { key: cy.token, path: "/api/v1/invocations" })).status).toBe(200);

      const off = await call(userRoute.PATCH, {
        method: "PATCH",
        key: admin.token,
        params: { user_id: cy.user.id },
        body: { active: false },
      });
      expect(off.body).toMatchObject({ active: false });
      expect((await call(listInvocations, { headers: { cookie }, path: "/api/v1/invocations" })).status).toBe(401);
      expect((await call(listInvocations, { key: cy.token, path: "/api/v1/invocations" })).body.code).toBe(
        "KEY_REVOKED",
      );
      expect(await t.db.prisma.session.count({ where: { userId: cy.user.id } })).toBe(0);
      expect(await signIn(cy.user.email, cy.password)).toBeNull();

      const on = await call(userRoute.PATCH, {
        method: "PATCH",
        key: admin.token,
        params: { user_id: cy.user.id },
        body: { active: true },
      });
      expect(on.body).toMatchObject({ active: true });
      expect(await signIn(cy.user.email, cy.password)).toMatch(/session_token=/);
      expect((await call(listInvocations, { key: cy.token, path: "/api/v1/invocations" })).status).toBe(401);
    });

    it("an admin cannot demote or deactivate themselves, even with another admin around", async () => {
      const other = await createOperator(t.db, "admin");
      for (const body of [{ role: "operator" }, { active: false }]) {
        const res = await call(userRoute.PATCH, {
          method: "PATCH",
          key: admin.token,
          params: { user_id: admin.user.id },
          body,
        });
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: "FORBIDDEN", safe_details: { rule: "self" } });
      }
      const fine = await call(userRoute.PATCH, {
        method: "PATCH",
        key: admin.token,
        params: { user_id: admin.user.id },
        body: { role: "admin" },
      });
      expect(fine.status).toBe(200);
      await updateUser(t.db, other.user.id, { active: false });
    });

    it("the last active admin cannot be removed, and two admins demoting each other at once leave one", async () => {
      const only = await t.db.prisma.user.findMany({ where: { role: "admin", banned: { not: true } } });
      expect(only.map((u) => u.id)).toEqual([admin.user.id]);
      await expect(updateUser(t.db, admin.user.id, { active: false })).rejects.toMatchObject({ code: "LAST_ADMIN" });

      const second = await createOperator(t.db, "admin");
      const results = await Promise.allSettled([
        updateUser(t.db, second.user.id, { role: "operator" }, admin.user),
        updateUser(t.db, admin.user.id, { role: "operator" }, second.user),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "LAST_ADMIN" } });
      expect(await t.db.prisma.user.count({ where: { role: "admin", banned: { not: true } } })).toBe(1);
      // Put the original admin back in charge for the tests after this one.
      const remaining = (await t.db.prisma.user.findFirstOrThrow({ where: { role: "admin", banned: { not: true } } }))
        .id;
      if (remaining !== admin.user.id) {
        await updateUser(t.db, admin.user.id, { role: "admin" }, { id: remaining, email: "test" });
        await updateUser(t.db, remaining, { role: "operator" }, admin.user);
      }
    });

    it("an unknown user is a 404 envelope, an empty change a 400", async () => {
      const missing = await call(userRoute.PATCH, {
        method: "PATCH",
        key: admin.token,
        params: { user_id: "nobody" },
        body: { role: "viewer" },
      });
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe("NOT_FOUND");
      const empty = await call(userRoute.PATCH, {
        method: "PATCH",
        key: admin.token,
        params: { user_id: admin.user.id },
        body: {},
      });
      expect(empty.status).toBe(400);
    });
  });

  describe("runtime keys", () => {
    it("creates a key (answered once), lists it by prefix only, revokes it; a revoked key gets 401 at ingest", async () => {
      const created = await call(keysRoute.POST, {
        key: admin.token,
        path: "/api/v1/admin/runtime-keys",
        body: { runtime: "billing-agent", name: "prod eu" },
      });
      expect(created.status).toBe(201);
      const { key, prefix } = created.body;
      expect(key).toMatch(/^stl_rk_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
      expect(key.startsWith(`${prefix}_`)).toBe(true);

      const record = (n: number) => ({
        event_id: `adm-${n}`,
        task_id: "t-adm",
        invocation_id: `inv-adm-${n}`,
        tool: "get_price",
        effect_class: "read",
      });
      expect((await call(ingest, { key, body: record(1) })).status).toBe(207);

      const list = await call(keysRoute.GET, {
        key: admin.token,
        path: "/api/v1/admin/runtime-keys?runtime=billing-agent",
      });
      expect(list.body.items).toEqual([
        expect.objectContaining({
          prefix,
          runtime: "billing-agent",
          name: "prod eu",
          revoked_at: null,
          last_used_at: expect.any(String),
        }),
      ]);
      expect(JSON.stringify(list.body)).not.toContain(key);

      const revoked = await call(keyRevokeRoute.POST, {
        key: admin.token,
        params: { prefix },
        path: `/api/v1/admin/runtime-keys/${prefix}/revoke`,
        method: "POST",
      });
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ already_revoked: false, key: { prefix, revoked_at: expect.any(String) } });
      const refused = await call(ingest, { key, body: record(2) });
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe("KEY_REVOKED");

      const again = await call(keyRevokeRoute.POST, { key: admin.token, params: { prefix }, method: "POST" });
      expect(again.body).toMatchObject({ already_revoked: true, key: { revoked_at: revoked.body.key.revoked_at } });
      const unknown = await call(keyRevokeRoute.POST, {
        key: admin.token,
        params: { prefix: "stl_rk_zzzzzzzz" },
        method: "POST",
      });
      expect(unknown.status).toBe(404);
    });

    it("refuses a runtime name with control characters or nothing in it", async () => {
      for (const runtime of ["", "   ", "bad\nname"]) {
        const res = await call(keysRoute.POST, {
          key: admin.token,
          path: "/api/v1/admin/runtime-keys",
          body: { runtime },
        });
        expect(res.status).toBe(400);
      }
    });
  });

  describe("personal access tokens", () => {
    it("creates (answered once, signed in), lists and revokes one's own tokens; the revoked one stops working", async () => {
      const dee = await createOperator(t.db, "viewer");
      const byToken = await call(tokensRoute.POST, {
        key: dee.token,
        path: "/api/v1/me/tokens",
        body: { name: "minted by a token" },
      });
      expect(byToken.status).toBe(403);
      expect(byToken.body).toMatchObject({ code: "FORBIDDEN", safe_details: { needs: "session" } });
      const cookie = (await signIn(dee.user.email, dee.password))!;
      const created = await call(tokensRoute.POST, {
        ...asSession(cookie),
        path: "/api/v1/me/tokens",
        body: { name: "nightly report", expires_in_days: 7 },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: "nightly report",
        revoked_at: null,
        token: expect.stringMatching(/^stl_pat_[a-z0-9]{8}_[A-Za-z0-9]{32}$/),
      });
      const lifetime = Date.parse(created.body.expires_at) - Date.now();
      expect(lifetime).toBeGreaterThan(7 * 86_400_000 - 60_000);
      expect(lifetime).toBeLessThanOrEqual(7 * 86_400_000);
      const fresh = created.body.token as string;
      expect((await call(listInvocations, { key: fresh, path: "/api/v1/invocations" })).status).toBe(200);

      const list = await call(tokensRoute.GET, { key: fresh, path: "/api/v1/me/tokens" });
      expect(list.body.items.map((x: { name: string }) => x.name)).toEqual(["nightly report", "tests"]);
      expect(JSON.stringify(list.body)).not.toContain(fresh);

      const revoked = await call(tokenRevokeRoute.POST, {
        key: dee.token,
        params: { prefix: created.body.prefix },
        method: "POST",
      });
      expect(revoked.body).toMatchObject({
        already_revoked: false,
        token: { prefix: created.body.prefix, revoked_at: expect.any(String) },
      });
      expect((await call(listInvocations, { key: fresh, path: "/api/v1/invocations" })).body.code).toBe("KEY_REVOKED");
    });

    it("cannot see or revoke someone else's token: not found, and it keeps working", async () => {
      const eve = await createOperator(t.db, "operator");
      const fay = await createOperator(t.db, "operator");
      const fays = (await t.db.prisma.personalToken.findFirstOrThrow({ where: { userId: fay.user.id } })).prefix;
      const res = await call(tokenRevokeRoute.POST, { key: eve.token, params: { prefix: fays }, method: "POST" });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("NOT_FOUND");
      expect((await call(listInvocations, { key: fay.token, path: "/api/v1/invocations" })).status).toBe(200);
      const eves = await call(tokensRoute.GET, { key: eve.token, path: "/api/v1/me/tokens" });
      expect(eves.body.items.map((x: { prefix: string }) => x.prefix)).not.toContain(fays);
    });

    it("a session creates a token only from Settle's own origin", async () => {
      const gus = await createOperator(t.db, "operator");
      const cookie = (await signIn(gus.user.email, gus.password))!;
      const foreign = await call(tokensRoute.POST, {
        headers: { cookie, origin: "https://evil.example" },
        body: { name: "stolen" },
      });
      expect(foreign.status).toBe(403);
      expect(foreign.body.code).toBe("INVALID_ORIGIN");
      const own = await call(tokensRoute.POST, {
        ...asSession(cookie),
        path: "/api/v1/me/tokens",
        body: { name: "mine" },
      });
      expect(own.status).toBe(201);
    });
  });

  describe("only admins administer", () => {
    const adminCalls = (prefix: string, userId: string) => [
      () => ({ handler: usersRoute.GET, options: { path: "/api/v1/admin/users" } }),
      () => ({
        handler: usersRoute.POST,
        options: { path: "/api/v1/admin/users", body: { email: "sneaky@example.com", role: "admin" } },
      }),
      () => ({
        handler: userRoute.PATCH,
        options: { method: "PATCH", params: { user_id: userId }, body: { role: "admin" } },
      }),
      () => ({ handler: keysRoute.GET, options: { path: "/api/v1/admin/runtime-keys" } }),
      () => ({ handler: keysRoute.POST, options: { path: "/api/v1/admin/runtime-keys", body: { runtime: "sneaky" } } }),
      () => ({ handler: keyRevokeRoute.POST, options: { method: "POST", params: { prefix } } }),
    ];

    it.each(["viewer", "operator", "manager"] as const)(
      "a %s gets 403 on every admin route, by token and by session, and nothing changes",
      async (role) => {
        const who = await createOperator(t.db, role);
        const cookie = (await signIn(who.user.email, who.password))!;
        const prefix = t.key.slice(0, "stl_rk_".length + 8);
        for (const make of adminCalls(prefix, who.user.id)) {
          const { handler, options } = make();
          for (const auth of [{ key: who.token }, asSession(cookie)]) {
            const res = await call(handler as never, { ...options, ...auth });
            expect(res.status).toBe(403);
            expect(res.body).toMatchObject({ ok: false, code: "FORBIDDEN", safe_details: { needs: "administer" } });
          }
        }
        expect(await t.db.prisma.user.count({ where: { email: "sneaky@example.com" } })).toBe(0);
        expect((await t.db.prisma.user.findUniqueOrThrow({ where: { id: who.user.id } })).role).toBe(role);
        expect((await t.db.prisma.runtimeKey.findUniqueOrThrow({ where: { prefix } })).revokedAt).toBeNull();
        expect(await t.db.prisma.runtime.count({ where: { name: "sneaky" } })).toBe(0);
      },
    );

    it("a runtime key gets 403 on admin and token routes", async () => {
      expect((await call(usersRoute.GET, { key: t.key, path: "/api/v1/admin/users" })).status).toBe(403);
      expect((await call(tokensRoute.GET, { key: t.key, path: "/api/v1/me/tokens" })).status).toBe(403);
    });

    it("without credentials, every route is a 401 envelope", async () => {
      expect((await call(usersRoute.GET, { path: "/api/v1/admin/users" })).status).toBe(401);
      expect((await call(tokensRoute.GET, { path: "/api/v1/me/tokens" })).status).toBe(401);
    });
  });
});
