import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as authGet, POST as authPost } from "@/app/api/auth/[...all]/route";
import * as myPassword from "@/app/api/v1/me/password/route";
import * as redeem from "@/app/api/v1/password-resets/route";
import { setEnv } from "@/lib/env";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { startServer, type TestServer } from "./http-server";
import { checkWebhookUrl } from "@/lib/webhooks/safe-url";
import { expectSettled, hostileText, hostileValue } from "./fuzz-inputs";
import { ORIGIN, signIn } from "./sessions";

// The shapes of the 2026-12 outside attack (issue 36), generated: what a caller without a key, with a runtime
// key, or with a viewer's login sent to grow Settle's memory or read a secret back.

const METRICS_TOKEN = "scrape-me-please-fuzz-0123";

describe("hostile paths never become metric labels", () => {
  let t: TestContext;
  let server: TestServer;
  beforeAll(async () => {
    t = await openSettle("postgres");
    server = await startServer();
  });
  afterAll(async () => {
    setEnv({ SETTLE_METRICS_TOKEN: undefined });
    await server?.close();
    await t?.teardown();
  });

  const seriesNow = async () => {
    setEnv({ SETTLE_METRICS_TOKEN: METRICS_TOKEN });
    const res = await fetch(`${server.url}/api/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    setEnv({ SETTLE_METRICS_TOKEN: undefined });
    const text = await res.text();
    return new Set(
      text
        .split("\n")
        .filter((l) => l.startsWith("settle_http_request_duration_seconds_count{"))
        .map((l) => l.slice(0, l.lastIndexOf(" "))),
    );
  };

  const templates = [
    "/api/v1/invocations/@/decision",
    "/api/v1/invocations/@",
    "/api/v1/invocations/@/attempts",
    "/api/v1/tasks/@",
    "/api/v1/tasks/@/timeline",
    "/api/v1/saved-views/@",
    "/api/v1/admin/users/@",
    "/api/v1/policies/@",
    "/api/v1/verifications/@",
  ];
  const segment = fc
    .oneof(hostileText, fc.string({ minLength: 1, maxLength: 3_000 }))
    .map((s) => encodeURIComponent((s === "" ? "x" : s).toWellFormed()));
  const credentials = fc.constantFrom<Record<string, string>>(
    {},
    { authorization: "Bearer stl_rk_aaaaaaaa_unknown0123456789" },
    { authorization: "Bearer stl_pat_bbbbbbbb_unknown0123456789" },
    { authorization: "Basic Zm9vOmJhcg==" },
    { cookie: "better-auth.session_token=forged.value" },
  );

  it("adds no series, whatever the id, the method or the credential", async () => {
    const warm = async () => {
      for (const template of templates)
        for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"])
          await fetch(`${server.url}${template.replace("@", "warm")}`, { method }).then((r) => r.arrayBuffer());
    };
    await warm();
    const before = await seriesNow();
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...templates),
        segment,
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"),
        credentials,
        async (template, id, method, headers) => {
          const res = await fetch(`${server.url}${template.replace("@", id)}`, { method, headers });
          await res.arrayBuffer();
          sent += 1;
          expect(res.status).toBeLessThan(500);
        },
      ),
      { numRuns: 300 },
    );
    const after = await seriesNow();
    const added = [...after].filter((s) => !before.has(s) && !s.includes('route="/api/metrics"'));
    // A credential Settle does not know may earn another status on a route (401 vs 404): that is a series per
    // (method, template, status), bounded by the registry, never one per path.
    for (const s of added) expect(s).toMatch(/route="\/api\/v1\/[a-z/{}_-]+",status="\d{3}"\}$/);
    expect(added.length).toBeLessThan(templates.length * 5 * 4);
    expect(sent).toBe(300);
  });
});

describe("the password surfaces under hostile input change nothing", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres", { SETTLE_SIGN_IN_ACCOUNT_LIMIT: "1000" });
  });
  afterAll(async () => {
    setEnv({ SETTLE_SIGN_IN_ACCOUNT_LIMIT: undefined });
    await t?.teardown();
  });

  it("Better Auth's endpoints: only sign-in, sign-out and the session are served, whatever the path or method", async () => {
    const victim = await createOperator(t.db, "operator");
    const hashBefore = (await t.db.prisma.account.findFirstOrThrow({ where: { userId: victim.user.id } })).password;
    const served = new Set(["/api/auth/sign-in/email", "/api/auth/sign-out", "/api/auth/get-session"]);
    const segment = fc.oneof(
      fc.constantFrom(
        "change-password",
        "reset-password",
        "request-password-reset",
        "set-password",
        "verify-password",
        "update-user",
        "change-email",
        "delete-user",
        "revoke-sessions",
        "admin/set-user-password",
        "admin/impersonate-user",
        "sign-up/email",
        "list-accounts",
      ),
      hostileText.map((x) => encodeURIComponent(x.toWellFormed())),
    );
    await fc.assert(
      fc.asyncProperty(segment, fc.constantFrom("GET", "POST"), hostileValue, async (path, method, body) => {
        const url = `${ORIGIN}/api/auth/${path}`;
        const init: RequestInit = { method, headers: { origin: ORIGIN, "content-type": "application/json" } };
        if (method === "POST")
          init.body = JSON.stringify({ userId: victim.user.id, newPassword: "taken over!!", payload: body });
        const res = await (method === "GET" ? authGet : authPost)(new Request(url, init));
        const text = await res.text();
        expect(res.status, `${method} ${path}`).toBeLessThan(500);
        if (!served.has(new URL(url).pathname)) {
          expect(res.status, `${method} ${path}`).toBe(404);
          expect(JSON.parse(text).code).toBe("NOT_FOUND");
        }
      }),
      { numRuns: 200 },
    );
    const hashAfter = (await t.db.prisma.account.findFirstOrThrow({ where: { userId: victim.user.id } })).password;
    expect(hashAfter).toBe(hashBefore);
  });

  it("hostile reset tokens and password bodies: typed refusals, and no password changes", async () => {
    const victim = await createOperator(t.db, "operator");
    const hashOf = async () =>
      (await t.db.prisma.account.findFirstOrThrow({ where: { userId: victim.user.id } })).password;
    const before = await hashOf();
    const cookie = (await signIn(victim.user.email, victim.password)).cookie!;
    await fc.assert(
      fc.asyncProperty(hostileValue, hostileText, async (token, password) => {
        expectSettled(
          "redeem",
          await call(redeem.POST, {
            path: "/api/v1/password-resets",
            body: { token, new_password: `${password}-long-enough` },
          }),
        );
        const changed = expectSettled(
          "change",
          await call(myPassword.POST, {
            headers: { cookie, origin: ORIGIN },
            path: "/api/v1/me/password",
            body: { current_password: password, new_password: token },
          }),
        );
        expect([400, 429]).toContain(changed.status);
      }),
      { numRuns: 150 },
    );
    expect(await hashOf()).toBe(before);
  });
});

describe("an IPv6 address that maps to a private or reserved IPv4 one is refused, however it is written", () => {
  const nonPublic = fc.oneof(
    fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
    fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
  );
  const hex = ([a, b, c, d]: number[]) => `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  const wrap = fc.constantFrom(
    (v4: number[]) => `64:ff9b::${v4.join(".")}`,
    (v4: number[]) => `64:ff9b::${hex(v4)}`,
    (v4: number[]) => `0064:ff9b:0000:0000:0000:0000:${hex(v4)}`,
    (v4: number[]) => `::ffff:0:${v4.join(".")}`,
    (v4: number[]) => `0:0:0:0:ffff:0:${hex(v4)}`,
    (v4: number[]) => `::ffff:${v4.join(".")}`,
    (v4: number[]) => `2a00:1450:4001:82b:0:5efe:${hex(v4)}`,
    (v4: number[]) => `2606:4700::200:5efe:${v4.join(".")}`,
  );
  it("as a literal in the URL, or as what its host name resolves to", async () => {
    await fc.assert(
      fc.asyncProperty(nonPublic, wrap, fc.boolean(), async (v4, spell, literal) => {
        const address = spell(v4);
        const check = literal
          ? await checkWebhookUrl(`http://[${address}]:8080/hook`, { allowPrivate: false })
          : await checkWebhookUrl("https://hooks.example.com/x", {
              allowPrivate: false,
              lookup: async () => [{ address, family: 6 }],
            });
        expect(check.ok, address).toBe(false);
      }),
      { numRuns: 400 },
    );
  });
});
