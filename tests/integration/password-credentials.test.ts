import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as authGet, POST as authPost } from "@/app/api/auth/[...all]/route";
import * as myPassword from "@/app/api/v1/me/password/route";
import * as passwordReset from "@/app/api/v1/admin/users/[user_id]/password-reset/route";
import * as redeem from "@/app/api/v1/password-resets/route";
import { setEnv } from "@/lib/env";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { ORIGIN, asSession, signIn } from "./sessions";
import { listInvocations } from "./routes";

// A password that changes closes every other door (issue 36): the other sessions end on any change or reset,
// every unused reset link of the person is spent by a newer reset, a redemption or a change, Better Auth's own
// password endpoints answer 404 (they would skip Settle's audit and rules), and wrong current passwords count
// toward the account's lock as failed sign-ins do.

const signedIn = async (cookie: string) =>
  (await call(listInvocations, { headers: asSession(cookie), path: "/api/v1/invocations" })).status;
const change = (cookie: string, current: string, next: string) =>
  call(myPassword.POST, {
    headers: asSession(cookie),
    path: "/api/v1/me/password",
    body: { current_password: current, new_password: next },
  });
const linkOf = (answer: { body: { link: string } }) => new URL(answer.body.link).searchParams.get("token")!;
const redeemWith = (token: string, password: string) =>
  call(redeem.POST, { path: "/api/v1/password-resets", body: { token, new_password: password } });

describe("a password change or reset leaves no other credential alive", () => {
  let t: TestContext;
  let admin: Awaited<ReturnType<typeof createOperator>>;
  const reset = (userId: string, mode: "link" | "temporary") =>
    call(passwordReset.POST, {
      key: admin.token,
      params: { user_id: userId },
      path: `/api/v1/admin/users/${userId}/password-reset`,
      body: { mode },
    });
  beforeAll(async () => {
    t = await openSettle("postgres", { SETTLE_SIGN_IN_ACCOUNT_LIMIT: "5" });
    admin = await createOperator(t.db, "admin");
  });
  afterAll(async () => {
    setEnv({ SETTLE_SIGN_IN_ACCOUNT_LIMIT: undefined });
    await t?.teardown();
  });

  it("changing one's own password ends every other session and keeps this one", async () => {
    const ana = await createOperator(t.db, "operator");
    const stolen = (await signIn(ana.user.email, ana.password)).cookie!;
    const laptop = (await signIn(ana.user.email, ana.password)).cookie!;
    expect(await signedIn(stolen)).toBe(200);
    expect((await change(laptop, ana.password, "ana's new password")).status).toBe(200);
    expect(await signedIn(stolen)).toBe(401);
    expect(await signedIn(laptop)).toBe(200);
  });

  it("a newer link, a temporary password or the person's own change spends every older link", async () => {
    const bo = await createOperator(t.db, "operator");
    const first = linkOf(await reset(bo.user.id, "link"));
    const second = linkOf(await reset(bo.user.id, "link"));
    const refused = await redeemWith(first, "an attacker's choice");
    expect(refused.status).toBe(410);
    expect(refused.body.code).toBe("RESET_LINK_INVALID");

    // A temporary password after a link: the link is spent.
    const temporary = (await reset(bo.user.id, "temporary")).body.temporary_password as string;
    expect((await redeemWith(second, "x".repeat(12))).body.code).toBe("RESET_LINK_INVALID");

    // A link, then the person changes their password themselves: the link is spent.
    const third = linkOf(await reset(bo.user.id, "link"));
    const own = (await signIn(bo.user.email, temporary)).cookie;
    // The link reset ended the temporary password's sessions but not the password itself.
    expect(own).not.toBeNull();
    expect((await change(own!, temporary, "bo picked this one")).status).toBe(200);
    expect((await redeemWith(third, "y".repeat(12))).body.code).toBe("RESET_LINK_INVALID");

    // A newer link spends the one before it, and redeeming it leaves no other behind.
    const fourth = linkOf(await reset(bo.user.id, "link"));
    const fifth = linkOf(await reset(bo.user.id, "link"));
    expect((await redeemWith(fifth, "z".repeat(12))).status).toBe(200);
    expect((await redeemWith(fourth, "w".repeat(12))).body.code).toBe("RESET_LINK_INVALID");
    expect((await signIn(bo.user.email, "z".repeat(12))).status).toBe(200);
  });

  it.each([
    ["POST", "/api/auth/change-password", { currentPassword: "x", newPassword: "y".repeat(12) }],
    ["POST", "/api/auth/reset-password", { token: "t", newPassword: "y".repeat(12) }],
    ["POST", "/api/auth/request-password-reset", { email: "a@example.com" }],
    ["POST", "/api/auth/forget-password", { email: "a@example.com" }],
    ["POST", "/api/auth/set-password", { newPassword: "y".repeat(12) }],
    ["POST", "/api/auth/verify-password", { password: "guess" }],
    ["POST", "/api/auth/update-user", { name: "Someone Else" }],
    ["POST", "/api/auth/change-email", { newEmail: "b@example.com" }],
    ["POST", "/api/auth/delete-user", {}],
    ["GET", "/api/auth/reset-password/some-token", null],
  ])("answers 404 on Better Auth's own %s %s, signed in or not", async (method, path, body) => {
    const cy = await createOperator(t.db, "operator");
    const cookie = (await signIn(cy.user.email, cy.password)).cookie!;
    for (const headers of [{ origin: ORIGIN }, asSession(cookie)]) {
      const init: RequestInit = { method, headers: { ...headers, "content-type": "application/json" } };
      if (body) init.body = JSON.stringify(body);
      const res = await (method === "GET" ? authGet : authPost)(new Request(`${ORIGIN}${path}`, init));
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await res.json()).code).toBe("NOT_FOUND");
    }
    // The password did not change and nobody was renamed.
    expect((await signIn(cy.user.email, cy.password)).status).toBe(200);
    expect((await t.db.prisma.user.findUniqueOrThrow({ where: { id: cy.user.id } })).name).toBe(cy.user.name);
  });

  it("counts wrong current passwords in the account lock, shared with sign-in", async () => {
    const di = await createOperator(t.db, "operator");
    const cookie = (await signIn(di.user.email, di.password)).cookie!;
    for (let i = 0; i < 5; i += 1)
      expect((await change(cookie, `guess number ${i}`, "di's new password")).status).toBe(400);
    const locked = await change(cookie, di.password, "di's new password");
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe("RATE_LIMITED");
    // Locked for sign-in too, even with the right password.
    expect((await signIn(di.user.email, di.password)).status).toBe(429);
  });
});
