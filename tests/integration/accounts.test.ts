import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as myPassword from "@/app/api/v1/me/password/route";
import * as passwordReset from "@/app/api/v1/admin/users/[user_id]/password-reset/route";
import * as redeem from "@/app/api/v1/password-resets/route";
import { runCli } from "@/cli/main";
import { getDb } from "@/lib/db/client";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { asSession, signIn } from "./sessions";
import { listInvocations } from "./routes";
import { stringifyExactJson } from "@/lib/json/exact";

// Accounts: a person changes their own password with the current one; an admin resets someone's as a
// one-time link or a temporary password that must be changed first; `settle users reset-password` for a
// lost admin password. Each reset ends the person's sessions and is audited.

describe("accounts", () => {
  let t: TestContext;
  let admin: Awaited<ReturnType<typeof createOperator>>;
  beforeAll(async () => {
    t = await openSettle("postgres");
    admin = await createOperator(t.db, "admin");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("changes one's own password with the current one; a token cannot; the wrong current one is a typed 400", async () => {
    const ana = await createOperator(t.db, "operator");
    const { cookie } = await signIn(ana.user.email, ana.password);
    const wrong = await call(myPassword.POST, {
      headers: asSession(cookie!),
      path: "/api/v1/me/password",
      body: { current_password: "not it at all", new_password: "a brand new password" },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("WRONG_PASSWORD");
    const short = await call(myPassword.POST, {
      headers: asSession(cookie!),
      path: "/api/v1/me/password",
      body: { current_password: ana.password, new_password: "short" },
    });
    expect(short.status).toBe(400);
    const byToken = await call(myPassword.POST, {
      key: ana.token,
      path: "/api/v1/me/password",
      body: { current_password: ana.password, new_password: "a brand new password" },
    });
    expect(byToken.status).toBe(403);

    const ok = await call(myPassword.POST, {
      headers: asSession(cookie!),
      path: "/api/v1/me/password",
      body: { current_password: ana.password, new_password: "a brand new password" },
    });
    expect(ok.status).toBe(200);
    expect((await signIn(ana.user.email, ana.password)).status).toBe(401);
    expect((await signIn(ana.user.email, "a brand new password")).status).toBe(200);
    const entry = await t.db.prisma.adminAction.findFirst({
      where: { action: "password_changed", targetId: ana.user.email },
    });
    expect(entry?.actor).toBe(ana.user.email);
    expect(stringifyExactJson(entry)).not.toContain("brand new");
  });

  it("a temporary password signs out everywhere and must be changed before anything else", async () => {
    const bo = await createOperator(t.db, "operator");
    const before = await signIn(bo.user.email, bo.password);
    const reset = await call(passwordReset.POST, {
      key: admin.token,
      params: { user_id: bo.user.id },
      body: { mode: "temporary" },
    });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ mode: "temporary", link: null, expires_at: null });
    const temporary = reset.body.temporary_password as string;
    // The old session is gone, and so is the old password.
    expect(
      (await call(listInvocations, { headers: asSession(before.cookie!), path: "/api/v1/invocations" })).status,
    ).toBe(401);
    expect((await signIn(bo.user.email, bo.password)).status).toBe(401);

    const session = await signIn(bo.user.email, temporary);
    expect(session.status).toBe(200);
    const blocked = await call(listInvocations, { headers: asSession(session.cookie!), path: "/api/v1/invocations" });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe("PASSWORD_CHANGE_REQUIRED");
    // A personal token is another credential: it keeps working.
    expect((await call(listInvocations, { key: bo.token, path: "/api/v1/invocations" })).status).toBe(200);

    const changed = await call(myPassword.POST, {
      headers: asSession(session.cookie!),
      path: "/api/v1/me/password",
      body: { current_password: temporary, new_password: "bo chose this one" },
    });
    expect(changed.status).toBe(200);
    expect(
      (await call(listInvocations, { headers: asSession(session.cookie!), path: "/api/v1/invocations" })).status,
    ).toBe(200);
    const trail = await t.db.prisma.adminAction.findMany({
      where: { targetId: bo.user.email },
      orderBy: { at: "asc" },
    });
    expect(trail.map((a) => [a.actor, a.action])).toEqual([
      ["cli", "user_invited"],
      [admin.user.email, "password_reset"],
      [bo.user.email, "password_changed"],
    ]);
    expect(stringifyExactJson(trail)).not.toContain(temporary);
  });

  it("a one-time link sets a password once, before it expires; only admins make one", async () => {
    const cy = await createOperator(t.db, "viewer");
    const refused = await call(passwordReset.POST, {
      key: cy.token,
      params: { user_id: admin.user.id },
      body: { mode: "link" },
    });
    expect(refused.status).toBe(403);
    const reset = await call(passwordReset.POST, {
      key: admin.token,
      params: { user_id: cy.user.id },
      body: { mode: "link" },
    });
    expect(reset.body.link).toMatch(/\/reset-password\?token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(reset.body.link).searchParams.get("token")!;
    const stored = await t.db.prisma.passwordReset.findFirstOrThrow({ where: { userId: cy.user.id } });
    expect(stored.tokenHash).not.toContain(token);

    const used = await call(redeem.POST, {
      path: "/api/v1/password-resets",
      body: { token, new_password: "cy picked a good one" },
    });
    expect(used.status).toBe(200);
    expect(used.body).toEqual({ email: cy.user.email });
    expect((await signIn(cy.user.email, "cy picked a good one")).status).toBe(200);
    const again = await call(redeem.POST, {
      path: "/api/v1/password-resets",
      body: { token, new_password: "someone else's pick" },
    });
    expect(again.status).toBe(410);
    expect(again.body.code).toBe("RESET_LINK_INVALID");

    const late = await call(passwordReset.POST, {
      key: admin.token,
      params: { user_id: cy.user.id },
      body: { mode: "link" },
    });
    await t.db.prisma.passwordReset.updateMany({
      where: { userId: cy.user.id, usedAt: null },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const expired = await call(redeem.POST, {
      path: "/api/v1/password-resets",
      body: { token: new URL(late.body.link).searchParams.get("token"), new_password: "too late for this" },
    });
    expect(expired.status).toBe(410);
    const unknown = await call(passwordReset.POST, {
      key: admin.token,
      params: { user_id: "u-none" },
      body: { mode: "link" },
    });
    expect(unknown.status).toBe(404);
  });

  it("settle users reset-password prints a temporary password for a lost admin password, audited as cli", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      sleep: async () => {},
    };
    expect(await runCli(["users", "reset-password", "--email", admin.user.email.toUpperCase()], io)).toBe(0);
    const temporary = out.join("").trim();
    expect(temporary).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(err.join("")).toContain("must change it when they sign in");
    expect(await runCli(["users", "reset-password", "--email", "nobody@example.com"], io)).toBe(1);
    const db = await getDb();
    const user = await db.prisma.user.findUniqueOrThrow({ where: { email: admin.user.email } });
    expect(user.passwordMustChange).toBe(true);
    const entry = await db.prisma.adminAction.findFirst({ where: { action: "password_reset", actor: "cli" } });
    expect(entry?.targetId).toBe(admin.user.email);
    expect((await signIn(admin.user.email, temporary)).status).toBe(200);
  });
});
