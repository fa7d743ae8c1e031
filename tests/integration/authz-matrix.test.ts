import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as myTokens } from "@/app/api/v1/me/tokens/route";
import type { RouteMeta } from "@/lib/http/route";
import { can, type Role } from "@/lib/identity/roles";
import { createPersonalToken } from "@/lib/identity/personal-tokens";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { createOperator, openSettle, type TestContext } from "./harness";

// The authorization matrix: every API route file × every HTTP method × every
// kind of caller, against one function of the route's declared auth. Routes
// are discovered from app/api/**/route.ts, so a new route gets its rows without
// anyone writing them — and a handler that is neither made by withRoute nor
// by otherMethods fails here until it is added to NOT_WITH_ROUTE with a reason.

const ORIGIN = "http://settle.test";
const API_DIR = fileURLToPath(new URL("../../app/api", import.meta.url));
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type Method = (typeof METHODS)[number];
/** Methods Next.js would also route to an export of that name: none may appear unaccounted for. */
const OTHER_EXPORTED_METHODS = ["HEAD", "OPTIONS"] as const;

type AnyHandler = ((
  req: Request,
  ctx?: { params: Promise<Record<string, string | string[]>> },
) => Promise<Response> | Response) & {
  route?: RouteMeta;
};

// ---------------------------------------------------------------------------
// Route discovery

/** URL path of a route file: app/api/v1/queue/route.ts → /api/v1/queue; app/v1/traces/route.ts (OTLP's own path) → /v1/traces. */
function urlPathOf(root: string, file: string): string {
  const dir = file.split(sep).slice(0, -1).join("/");
  return dir ? `/${root}/${dir}` : `/${root}`;
}

const ROOTS = ["api", "v1"] as const;
const files: string[] = [];
const modules = (
  await Promise.all(
    ROOTS.map(async (root) => {
      const dir = root === "api" ? API_DIR : fileURLToPath(new URL(`../../app/${root}`, import.meta.url));
      const found = readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((f) => f === "route.ts" || f.endsWith(`${sep}route.ts`))
        .sort();
      files.push(...found.map((f) => `${root}/${f}`));
      return Promise.all(
        found.map(async (file) => ({
          file: `app/${root}/${file.split(sep).join("/")}`,
          path: urlPathOf(root, file),
          mod: (await import(join(dir, file))) as Record<string, unknown>,
        })),
      );
    }),
  )
).flat();

/**
 * Placeholder values for dynamic segments, chosen to pass each route's zod
 * params so the request reaches its handler, and to name nothing that exists:
 * no row of the matrix may change what a later row sees.
 */
function placeholder(segment: string, path: string): string {
  switch (segment) {
    case "invocation_id":
      return "inv-none";
    case "task_id":
      return "task-none";
    case "user_id":
      return "u-none";
    case "effect_class":
      return "read";
    case "runtime":
      return "runtime-none";
    case "endpoint_id":
    case "delivery_id":
    case "channel_id":
    case "message_id":
    case "entry_id":
    case "verification_id":
    case "id":
      return randomUUID();
    case "slack_user_id":
      return "UNOBODY0";
    case "prefix":
      if (path.startsWith("/api/v1/admin/runtime-keys/")) return "stl_rk_aaaaaaaa";
      if (path.startsWith("/api/v1/me/tokens/")) return "stl_pat_aaaaaaaa";
      break;
  }
  throw new Error(
    `No placeholder for the segment [${segment}] of ${path}: add one to placeholder() in tests/integration/authz-matrix.test.ts.`,
  );
}

/** The path with its segments filled in, and the params Next.js would hand the handler. */
function concrete(path: string): { url: string; params: Record<string, string | string[]> } {
  const params: Record<string, string | string[]> = {};
  const url = path.replace(/\[([^\]]+)\]/g, (_, segment: string) => {
    const value = placeholder(segment, path);
    params[segment.replace(/^\.\.\./, "")] = value;
    return encodeURIComponent(value);
  });
  return { url, params };
}

/** What a row's answer is decided by. */
type RowRule =
  { kind: "route"; meta: RouteMeta } | { kind: "not-allowed" } | { kind: "fixed"; status: number; code: string };

type Row = {
  file: string;
  method: Method;
  path: string;
  url: string;
  params: Record<string, string | string[]>;
  handler: AnyHandler;
  rule: RowRule;
};

/**
 * Handlers made neither by withRoute nor by otherMethods. Each entry says why,
 * and which rows stand for it; a route file or method not covered by
 * withRoute, otherMethods or this list fails the discovery test.
 */
const NOT_WITH_ROUTE: Record<
  string,
  { reason: string; rows: Array<{ method: Method; path: string; status: number; code: string }> }
> = {
  "app/api/[...path]/route.ts": {
    reason: "The catch-all under /api: an unknown API path answers 404 with the error envelope, whoever asks.",
    rows: METHODS.map((method) => ({ method, path: "/api/no/such/route", status: 404, code: "NOT_FOUND" })),
  },
  "app/api/auth/[...all]/route.ts": {
    reason:
      "Better Auth's own endpoints: only sign-in, sign-out and the session are served (covered by auth.test.ts). Everything else is closed " +
      "(lib/http/auth-handler.ts): its admin plugin's endpoints (people are managed only through /api/v1/admin/users) and its own password " +
      "and account endpoints (passwords change through /api/v1/me/password and Settle's resets) answer 404 to everyone, admins included.",
    rows: [
      ...[
        "impersonate-user",
        "set-role",
        "ban-user",
        "unban-user",
        "list-users",
        "stop-impersonating",
        "create-user",
        "remove-user",
        "set-user-password",
      ].map((name) => ({ method: "POST" as const, path: `/api/auth/admin/${name}`, status: 404, code: "NOT_FOUND" })),
      { method: "GET", path: "/api/auth/admin/list-users", status: 404, code: "NOT_FOUND" },
      { method: "GET", path: "/api/auth/admin", status: 404, code: "NOT_FOUND" },
      ...[
        "change-password",
        "reset-password",
        "request-password-reset",
        "verify-password",
        "update-user",
        "change-email",
        "delete-user",
        "sign-up/email",
      ].map((name) => ({ method: "POST" as const, path: `/api/auth/${name}`, status: 404, code: "NOT_FOUND" })),
      { method: "GET", path: "/api/auth/reset-password/a-token", status: 404, code: "NOT_FOUND" },
    ],
  },
};

/** Exports that no rule accounts for: each is a reason the discovery test fails. */
const unaccounted: string[] = [];
const rows: Row[] = [];
for (const { file, path, mod } of modules) {
  const listed = NOT_WITH_ROUTE[file];
  for (const name of OTHER_EXPORTED_METHODS) {
    if (name in mod && !listed) unaccounted.push(`${file}: exports ${name}, which the matrix does not cover`);
  }
  for (const method of METHODS) {
    const exported = mod[method];
    if (exported === undefined) continue;
    if (typeof exported !== "function") {
      unaccounted.push(`${file}: ${method} is not a function`);
      continue;
    }
    const handler = exported as AnyHandler;
    if (listed) {
      const own = listed.rows.filter((r) => r.method === method);
      if (own.length === 0)
        unaccounted.push(`${file}: ${method} is allow-listed as a file but has no row in NOT_WITH_ROUTE`);
      for (const r of own)
        rows.push({
          file,
          method,
          path: r.path,
          url: r.path,
          params: {},
          handler,
          rule: { kind: "fixed", status: r.status, code: r.code },
        });
      continue;
    }
    const { url, params } = concrete(path);
    rows.push({
      file,
      method,
      path,
      url,
      params,
      handler,
      rule: handler.route ? { kind: "route", meta: handler.route } : { kind: "not-allowed" },
    });
  }
}
for (const [file, entry] of Object.entries(NOT_WITH_ROUTE)) {
  const mod = modules.find((m) => m.file === file)?.mod;
  if (!mod) unaccounted.push(`${file}: in NOT_WITH_ROUTE but no such route file`);
  for (const r of entry.rows)
    if (mod && typeof mod[r.method] !== "function")
      unaccounted.push(`${file}: NOT_WITH_ROUTE lists ${r.method}, which it does not export`);
}

/**
 * Is this an otherMethods refusal? It answers synchronously (withRoute's
 * handlers are async), 405 METHOD_NOT_ALLOWED with an Allow header, without
 * reading the database.
 */
async function isOtherMethodsRefusal(handler: AnyHandler, method: Method): Promise<boolean> {
  const res = handler(new Request(`${ORIGIN}/api/probe`, { method }));
  if (res instanceof Promise || !(res instanceof Response)) {
    await res;
    return false;
  }
  const body = (await res.json().catch(() => null)) as { code?: string } | null;
  return res.status === 405 && body?.code === "METHOD_NOT_ALLOWED" && !!res.headers.get("allow");
}

// ---------------------------------------------------------------------------
// Callers

type CallerKind = "none" | "runtime" | "session" | "token" | "revoked-token" | "expired-token" | "impersonated-session";
type CallerSpec = { name: string; kind: CallerKind; role?: Role };

const CALLERS: CallerSpec[] = [
  { name: "no credentials", kind: "none" },
  { name: "runtime key A", kind: "runtime" },
  { name: "runtime key B", kind: "runtime" },
  { name: "viewer session", kind: "session", role: "viewer" },
  { name: "operator session", kind: "session", role: "operator" },
  { name: "manager session", kind: "session", role: "manager" },
  { name: "admin session", kind: "session", role: "admin" },
  { name: "viewer token", kind: "token", role: "viewer" },
  { name: "admin token", kind: "token", role: "admin" },
  { name: "revoked token", kind: "revoked-token" },
  { name: "expired token", kind: "expired-token" },
  { name: "impersonated session", kind: "impersonated-session" },
];

// ---------------------------------------------------------------------------
// The expected answer: one function of (rule, caller), mirroring lib/identity/principal.ts.

type Expected = { pass: true } | { pass: false; status: number; code: string };
const PASS: Expected = { pass: true };
const refuse = (status: number, code: string): Expected => ({ pass: false, status, code });

function expected(rule: RowRule, caller: CallerSpec): Expected {
  if (rule.kind === "fixed") return refuse(rule.status, rule.code);
  if (rule.kind === "not-allowed") return refuse(405, "METHOD_NOT_ALLOWED");
  const { auth, permission } = rule.meta;
  if (auth === false) return PASS;
  switch (caller.kind) {
    case "none":
      return refuse(401, "UNAUTHENTICATED");
    case "revoked-token":
      return refuse(401, "KEY_REVOKED");
    case "expired-token":
      return refuse(401, "TOKEN_EXPIRED");
    case "impersonated-session":
      // Treated as no session at all (lib/identity/session-user.ts).
      return refuse(401, "UNAUTHENTICATED");
    case "runtime":
      return auth === "runtime" || auth === "any" ? PASS : refuse(403, "FORBIDDEN");
  }
  // A person: a signed-in session or a personal access token.
  if (auth === "runtime") {
    // A runtime route wants a bearer key and reads no session to refuse a
    // request without one (lib/identity/principal.ts authenticate): a cookie is no
    // credential there, so a session is 401; a person's token is 403.
    return caller.kind === "session" ? refuse(401, "UNAUTHENTICATED") : refuse(403, "FORBIDDEN");
  }
  if (auth === "session" && caller.kind === "token") return refuse(403, "FORBIDDEN");
  if (permission && !can(caller.role, permission)) return refuse(403, "FORBIDDEN");
  return PASS;
}

/**
 * Routes whose credential is a signature over the body from a third party, which no caller here carries:
 * every caller, a signed-in admin included, is refused.
 */
const SIGNED_BY_THIRD_PARTY: Record<string, { method: Method; reason: string }> = {
  "/api/v1/integrations/slack/interactions": {
    method: "POST",
    reason: "Slack's interactivity requests: only Slack's v0 signature is a credential (lib/slack/interactions.ts).",
  },
  "/api/v1/integrations/slack/commands": {
    method: "POST",
    reason: "Slack's slash commands: only Slack's v0 signature is a credential (lib/slack/commands.ts).",
  },
};

function expectedFor(row: Pick<Row, "path" | "method" | "rule">, caller: CallerSpec): Expected {
  const signed = SIGNED_BY_THIRD_PARTY[row.path];
  if (signed && signed.method === row.method) return refuse(401, "UNAUTHENTICATED");
  return expected(row.rule, caller);
}

function label(e: Expected): string {
  return e.pass ? "passes auth (not 401/403/5xx)" : `${e.status} ${e.code}`;
}

// ---------------------------------------------------------------------------
// The matrix, on PostgreSQL

async function signIn(email: string, password: string): Promise<string> {
  const { POST } = (await import("@/app/api/auth/[...all]/route")) as { POST: (req: Request) => Promise<Response> };
  const res = await POST(
    new Request(`${ORIGIN}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ email, password }),
    }),
  );
  if (res.status !== 200) throw new Error(`sign-in of ${email} answered ${res.status}: ${await res.text()}`);
  const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token"));
  if (!cookie) throw new Error(`sign-in of ${email} set no session cookie`);
  return cookie.split(";")[0]!;
}

describe("authorization matrix (PostgreSQL)", () => {
  let t: TestContext;
  const headersOf = new Map<string, Record<string, string>>();

  beforeAll(async () => {
    t = await openSettle("postgres");
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const session = (cookie: string) => ({ cookie, origin: ORIGIN });

    headersOf.set("no credentials", {});
    headersOf.set("runtime key A", bearer(t.key));
    headersOf.set("runtime key B", bearer((await createRuntimeKey(t.db, "rt-b")).key));

    const people = {} as Record<Role, Awaited<ReturnType<typeof createOperator>>>;
    for (const role of ["viewer", "operator", "manager", "admin"] as const) {
      people[role] = await createOperator(t.db, role);
      headersOf.set(`${role} session`, session(await signIn(people[role].user.email, people[role].password)));
    }
    headersOf.set("viewer token", bearer(people.viewer.token));
    headersOf.set("admin token", bearer(people.admin.token));

    const revoked = await createPersonalToken(t.db, people.viewer.user.id, "revoked");
    await t.db.prisma.personalToken.update({ where: { prefix: revoked.prefix }, data: { revokedAt: new Date() } });
    headersOf.set("revoked token", bearer(revoked.token));

    const expired = await createPersonalToken(t.db, people.viewer.user.id, "expired");
    await t.db.prisma.personalToken.update({
      where: { prefix: expired.prefix },
      data: { expiresAt: new Date(Date.now() - 60_000) },
    });
    headersOf.set("expired token", bearer(expired.token));

    // An operator's session that an admin "impersonates": Settle must not accept it.
    const impersonated = await createOperator(t.db, "operator");
    const cookie = await signIn(impersonated.user.email, impersonated.password);
    const before = await myTokens(new Request(`${ORIGIN}/api/v1/me/tokens`, { headers: session(cookie) }));
    expect(before.status, "the session works before it is marked as an impersonation").toBe(200);
    const { count } = await t.db.prisma.session.updateMany({
      where: { userId: impersonated.user.id },
      data: { impersonatedBy: people.admin.user.id },
    });
    expect(count).toBe(1);
    headersOf.set("impersonated session", session(cookie));
  });

  afterAll(async () => {
    await t?.teardown();
  });

  describe("discovery", () => {
    it(`finds the route files (${files.length}) and every method has a rule`, async () => {
      expect(files.length).toBeGreaterThanOrEqual(30);
      expect(rows.length).toBeGreaterThanOrEqual(150);
      expect(rows.filter((r) => r.rule.kind === "route").length).toBeGreaterThanOrEqual(30);
      const problems = [...unaccounted];
      for (const row of rows) {
        if (row.rule.kind === "not-allowed" && !(await isOtherMethodsRefusal(row.handler, row.method))) {
          problems.push(
            `${row.file}: ${row.method} is neither made by withRoute (no .route) nor by otherMethods; add it to NOT_WITH_ROUTE with a reason`,
          );
        }
      }
      expect(problems).toEqual([]);
    });

    it("every caller was built", () => {
      expect([...headersOf.keys()].sort()).toEqual(CALLERS.map((c) => c.name).sort());
    });
  });

  for (const row of rows) {
    describe(`${row.method} ${row.path}`, () => {
      for (const caller of CALLERS) {
        const want = expectedFor(row, caller);
        it(`${row.method} ${row.path} × ${caller.name} → ${label(want)}`, async () => {
          const headers: Record<string, string> = { ...headersOf.get(caller.name) };
          let body: string | undefined;
          if (row.method === "POST" || row.method === "PUT" || row.method === "PATCH") {
            headers["content-type"] = "application/json";
            body = "{}";
          }
          const req = new Request(`${ORIGIN}${row.url}`, { method: row.method, headers, body });
          const res = await row.handler(req, { params: Promise.resolve(row.params) });
          const text = await res.text();
          let code: unknown;
          try {
            code = (JSON.parse(text) as { code?: unknown }).code;
          } catch {
            code = undefined;
          }
          const got = `${res.status} ${String(code ?? "")}`.trim();
          if (want.pass) {
            expect([401, 403], `answered ${got}: ${text.slice(0, 300)}`).not.toContain(res.status);
            expect(res.status, `answered ${got}: ${text.slice(0, 300)}`).toBeLessThan(500);
          } else {
            expect(got, text.slice(0, 300)).toBe(`${want.status} ${want.code}`);
          }
        });
      }
    });
  }
});
