import "server-only";
import { randomUUID } from "node:crypto";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { nextCookies } from "better-auth/next-js";
import { admin } from "better-auth/plugins";
import { getDb, type Db } from "../db/client";
import { env, publicUrl, type Env } from "../env";
import { devPageOrigins } from "./dev-origins";
import { CLIENT_ADDRESS_HEADER } from "./client-ip";
import { ac, accessRoles } from "./access-control";
import { authSecret } from "./secret";
import { processWide } from "../process-wide";

// Better Auth: email + password sign-in, sessions in the database, the admin
// plugin for roles and deactivation. Sign-up is closed: admins create users
// (console or `settle users create`). The admin plugin's HTTP endpoints are
// closed too (lib/http/auth-handler.ts): Settle calls it only from lib/identity/users.ts.

/**
 * SETTLE_PUBLIC_URL when set. Without it, `next dev` hands route handlers a
 * URL at localhost whatever the page was opened at, so sign-in from
 * 127.0.0.1 or the LAN address it prints failed "Invalid origin": in
 * development, those hosts of this machine at its port are Settle's address too.
 */
function baseUrlOf(settings: Env) {
  const dev = devPageOrigins(settings);
  if (dev.length === 0) return settings.SETTLE_PUBLIC_URL;
  return { allowedHosts: dev.map((origin) => new URL(origin).host), fallback: publicUrl(), protocol: "http" as const };
}

function createAuth(prisma: Db["prisma"]) {
  const settings = env();
  return betterAuth({
    appName: "Settle",
    secret: authSecret(),
    baseURL: baseUrlOf(settings),
    database: prismaAdapter(prisma, { provider: "postgresql" }),
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 10 },
    // Set by an admin's reset to a temporary password (lib/identity/passwords.ts); never from a request.
    user: {
      additionalFields: { passwordMustChange: { type: "boolean", required: false, defaultValue: false, input: false } },
    },
    session: { expiresIn: 60 * 60 * 24 * 7, updateAge: 60 * 60 * 24 },
    rateLimit: {
      enabled: settings.NODE_ENV !== "test",
      storage: "database",
      window: 60,
      max: 300,
      customRules: { "/sign-in/email": { window: 60, max: settings.SETTLE_SIGN_IN_RATE_LIMIT } },
    },
    advanced: {
      database: { generateId: () => randomUUID() },
      // Set by lib/http/auth-handler.ts from the socket and SETTLE_TRUSTED_PROXIES, replacing anything a client sent.
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
      // Better Auth skips its origin check under NODE_ENV=test; the tests check what production does.
      disableOriginCheck: false,
    },
    telemetry: { enabled: false },
    // Without SETTLE_PUBLIC_URL the origin comes from each request, on purpose; no need to warn about it.
    logger: { level: settings.SETTLE_PUBLIC_URL ? "warn" : "error" },
    plugins: [admin({ ac, roles: accessRoles, defaultRole: "viewer", adminRoles: ["admin"] }), nextCookies()],
  });
}

export type Auth = ReturnType<typeof createAuth>;

// One Better Auth per database handle: a test or CLI run that reopens the
// database gets a fresh instance instead of one bound to a closed client.
const current = () => processWide("auth", () => ({ bound: undefined as { db: Db; auth: Auth } | undefined }));

export async function getAuth(): Promise<Auth> {
  const db = await getDb();
  const holder = current();
  if (holder.bound?.db !== db) holder.bound = { db, auth: createAuth(db.prisma) };
  return holder.bound.auth;
}
