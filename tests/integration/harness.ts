import { randomBytes } from "node:crypto";
import pg from "pg";
import { closeDb, getDb, type Db } from "@/lib/db/client";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { setEnv } from "@/lib/env";

// Every test run gets its own database: a fresh PostgreSQL database that is
// dropped afterwards, or an in-memory PGlite.

export const PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres";
export type Backend = "postgres" | "pglite";

export async function createDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `settle_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    name,
    url: `postgresql://postgres@127.0.0.1:5432/${name}`,
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export type TestContext = { db: Db; key: string; runtime: string; teardown: () => Promise<void> };

/** Opens Settle on a fresh database of the given kind, with one runtime key. */
export async function openSettle(backend: Backend, extraEnv: Record<string, string> = {}): Promise<TestContext> {
  await closeDb();
  let drop = async () => {};
  if (backend === "postgres") {
    const database = await createDatabase();
    drop = database.drop;
    setEnv({ DATABASE_URL: database.url, SETTLE_DATA_DIR: undefined, ...extraEnv });
  } else {
    setEnv({ DATABASE_URL: undefined, SETTLE_DATA_DIR: "memory://", ...extraEnv });
  }
  const db = await getDb();
  const { key, runtime } = await createRuntimeKey(db, "rt-test");
  return {
    db,
    key,
    runtime,
    teardown: async () => {
      await closeDb();
      await drop();
    },
  };
}

type Handler = (req: Request, ctx?: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;

export type CallOptions = {
  method?: string;
  key?: string | null;
  body?: unknown;
  raw?: string;
  contentType?: string;
  params?: Record<string, string>;
  headers?: Record<string, string>;
  path?: string;
};

/** Calls a route handler the way Next.js does, without an HTTP server. */
export async function call(
  handler: Handler,
  options: CallOptions = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  const req = new Request(`http://settle.test${options.path ?? "/api/v1/envelopes"}`, {
    method: options.method ?? (body !== undefined ? "POST" : "GET"),
    headers,
    body,
  });
  const res = await handler(req, { params: Promise.resolve(options.params ?? {}) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* a non-JSON body is itself a failure the tests assert on */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A person with a role, and a personal access token that acts as them. */
export async function createOperator(
  db: Db,
  role: "viewer" | "operator" | "manager" | "admin",
  email = `${role}-${randomBytes(3).toString("hex")}@example.com`,
) {
  const { createUser } = await import("@/lib/identity/users");
  const { createPersonalToken } = await import("@/lib/identity/personal-tokens");
  const { user, password } = await createUser(db, { email, role, password: "correct horse battery" });
  const { token } = await createPersonalToken(db, user.id, "tests");
  return { user, password, token };
}

export type CliRun = { code: number; stdout: string; stderr: string; waits: number[] };

/** `settle <argv>` in this process, as a user would see it on stdout and stderr; waits between retries return at once and are recorded. */
export async function runSettleCli(argv: string[]): Promise<CliRun> {
  const { runCli } = await import("@/cli/main");
  const out: string[] = [];
  const err: string[] = [];
  const waits: number[] = [];
  const code = await runCli(argv, {
    stdout: { write: (s) => out.push(s) },
    stderr: { write: (s) => err.push(s) },
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { code, stdout: out.join(""), stderr: err.join(""), waits };
}
