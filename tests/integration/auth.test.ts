import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as authGet, POST as authPost } from "@/app/api/auth/[...all]/route";
import { POST as act } from "@/app/api/v1/invocations/[invocation_id]/actions/route";
import { revokePersonalToken } from "@/lib/identity/personal-tokens";
import { setUserActive } from "@/lib/identity/users";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getInvocation, ingest, listInvocations } from "./routes";

const ORIGIN = "http://settle.test";

async function signIn(email: string, password: string): Promise<string> {
  const res = await authPost(
    new Request(`${ORIGIN}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ email, password }),
    }),
  );
  expect(res.status).toBe(200);
  const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token"));
  expect(cookie).toBeDefined();
  return cookie!.split(";")[0]!;
}

describe("people: sessions, personal tokens and roles", () => {
  let t: TestContext;
  let version: number;
  beforeAll(async () => {
    t = await openSettle("postgres");
    await call(ingest, {
      key: t.key,
      body: {
        event_id: "a-1",
        task_id: "ord-1",
        invocation_id: "inv-a",
        tool: "charge_card",
        effect_class: "money",
        envelope: { title: "Gateway Timeout", status: 504 },
      },
    });
    version = (await call(getInvocation, { key: t.key, params: { invocation_id: "inv-a" } })).body.version;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("a viewer reads every runtime's invocations but cannot act (403), by token", async () => {
    const viewer = await createOperator(t.db, "viewer");
    const list = await call(listInvocations, { key: viewer.token, path: "/api/v1/invocations" });
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: { invocation_id: string }) => i.invocation_id)).toContain("inv-a");
    const res = await call(act, {
      key: viewer.token,
      params: { invocation_id: "inv-a" },
      body: { action: "escalate", note: "x", version },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ ok: false, code: "FORBIDDEN", safe_details: { role: "viewer", needs: "act" } });
  });

  it("a runtime key cannot act, and a personal token cannot ingest", async () => {
    const operator = await createOperator(t.db, "operator");
    expect(
      (
        await call(act, {
          key: t.key,
          params: { invocation_id: "inv-a" },
          body: { action: "comment", note: "x", version },
        })
      ).status,
    ).toBe(403);
    expect(
      (await call(ingest, { key: operator.token, body: { task_id: "t", invocation_id: "i", tool: "x" } })).status,
    ).toBe(403);
  });

  it("an operator signs in; a session POST needs Settle's own Origin (CSRF)", async () => {
    const operator = await createOperator(t.db, "operator");
    const cookie = await signIn(operator.user.email, operator.password);
    const session = await authGet(new Request(`${ORIGIN}/api/auth/get-session`, { headers: { cookie } }));
    expect((await session.json()).user.email).toBe(operator.user.email);

    const foreign = await call(act, {
      headers: { cookie, origin: "https://evil.example" },
      params: { invocation_id: "inv-a" },
      body: { action: "comment", note: "hi", version },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("INVALID_ORIGIN");
    const missing = await call(act, {
      headers: { cookie },
      params: { invocation_id: "inv-a" },
      body: { action: "comment", note: "hi", version },
    });
    expect(missing.status).toBe(403);

    const ok = await call(act, {
      headers: { cookie, origin: ORIGIN },
      params: { invocation_id: "inv-a" },
      body: { action: "request_verification", version },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      status: "verifying",
      actions: [{ action: "request_verification", actor: operator.user.email }],
    });
    version = ok.body.version;
  });

  it("a stale version is a 409 that names the current state", async () => {
    const operator = await createOperator(t.db, "operator");
    const res = await call(act, {
      key: operator.token,
      params: { invocation_id: "inv-a" },
      body: { action: "escalate", note: "late", version: version - 1 },
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "VERSION_CONFLICT", safe_details: { version, status: "verifying" } });
  });

  it("a refused transition is a 409, an invalid action a 400", async () => {
    const operator = await createOperator(t.db, "operator");
    const refused = await call(act, {
      key: operator.token,
      params: { invocation_id: "inv-a" },
      body: { action: "approve", version },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("TRANSITION_REFUSED");
    const invalid = await call(act, {
      key: operator.token,
      params: { invocation_id: "inv-a" },
      body: { action: "mark_reconciled", commit_state: "committed", version },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe("INVALID_REQUEST");
  });

  it("a revoked token, and a deactivated person's token and session, stop working", async () => {
    const a = await createOperator(t.db, "operator");
    await revokePersonalToken(
      t.db,
      a.user.id,
      (await t.db.prisma.personalToken.findFirstOrThrow({ where: { userId: a.user.id } })).prefix,
    );
    expect((await call(listInvocations, { key: a.token, path: "/api/v1/invocations" })).status).toBe(401);

    const b = await createOperator(t.db, "operator");
    const cookie = await signIn(b.user.email, b.password);
    await setUserActive(t.db, b.user.id, false);
    expect((await call(listInvocations, { key: b.token, path: "/api/v1/invocations" })).status).toBe(401);
    expect((await call(listInvocations, { headers: { cookie }, path: "/api/v1/invocations" })).status).toBe(401);
  });
});
