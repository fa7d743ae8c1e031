import "server-only";
import type { Db } from "../db/client";
import { can, type Permission, type Role } from "./roles";
import { getSessionUser } from "./session-user";
import { lookupPersonalToken, PERSONAL_TOKEN_PREFIX } from "./personal-tokens";
import { lookupRuntimeKey, RUNTIME_KEY_PREFIX } from "./runtime-keys";
import { devPageOrigins } from "./dev-origins";
import { env } from "../env";
import { ApiError } from "../errors";

// Who is calling: a runtime (ingest key), or a person (browser session or
// personal access token) with a role. Every API route goes through here.

export type RuntimePrincipal = { kind: "runtime"; runtime: { id: string; name: string } };
export type UserPrincipal = {
  kind: "user";
  via: "session" | "token";
  user: { id: string; email: string; name: string; role: Role; passwordMustChange?: boolean; sessionId?: string };
};
export type Principal = RuntimePrincipal | UserPrincipal;

/** runtime: ingest keys only; user: sessions and personal tokens; session: a signed-in browser only; any: either. */
export type AuthMode = "runtime" | "user" | "session" | "any";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function bearerToken(req: Request): string | null {
  const header = req.headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** Which runtimes' data a caller may see: a runtime only its own (runtimeId), a person every runtime's. */
export type Scope = { runtimeId?: string };

/** What a principal may see: a runtime only its own data, a person everything. */
export function scopeOf(principal: Principal): Scope {
  return principal.kind === "runtime" ? { runtimeId: principal.runtime.id } : {};
}

export function actorOf(principal: Principal): string {
  return principal.kind === "user" ? principal.user.email : `runtime:${principal.runtime.name}`;
}

// A state-changing request carried by a cookie must come from Settle's own
// pages: the browser's Origin has to be this server's (or SETTLE_PUBLIC_URL's).
function assertSameOrigin(req: Request): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.get("origin");
  const settings = env();
  const allowed = new Set([new URL(req.url).origin, ...devPageOrigins(settings)]);
  if (settings.SETTLE_PUBLIC_URL) allowed.add(new URL(settings.SETTLE_PUBLIC_URL).origin);
  if (!origin || !allowed.has(origin)) {
    throw new ApiError(
      "INVALID_ORIGIN",
      "A signed-in request that changes something must come from Settle's own pages (Origin header).",
    );
  }
}

async function sessionUser(req: Request): Promise<UserPrincipal | null> {
  const user = await getSessionUser(req.headers);
  return user ? { kind: "user", via: "session", user } : null;
}

async function identify(db: Db, req: Request): Promise<Principal> {
  const token = bearerToken(req);
  if (token?.startsWith(RUNTIME_KEY_PREFIX)) {
    const found = await lookupRuntimeKey(db, token);
    if (found.status === "revoked")
      throw new ApiError("KEY_REVOKED", "This runtime key was revoked. Ask an admin for a new one.");
    if (found.status === "unknown") throw new ApiError("UNAUTHENTICATED", "Unknown runtime key.");
    return { kind: "runtime", runtime: found.runtime };
  }
  if (token?.startsWith(PERSONAL_TOKEN_PREFIX)) {
    const found = await lookupPersonalToken(db, token);
    if (found.status === "revoked")
      throw new ApiError("KEY_REVOKED", "This personal access token was revoked, or its owner deactivated.");
    if (found.status === "expired") {
      throw new ApiError(
        "TOKEN_EXPIRED",
        `This personal access token expired at ${found.expiresAt}. Create a new one on the Account page.`,
        { expired_at: found.expiresAt },
      );
    }
    if (found.status === "unknown") throw new ApiError("UNAUTHENTICATED", "Unknown personal access token.");
    return { kind: "user", via: "token", user: found.user };
  }
  if (token) {
    throw new ApiError(
      "UNAUTHENTICATED",
      "That is not a Settle key: runtime ingest keys start with `stl_rk_`, personal access tokens with `stl_pat_`.",
    );
  }
  const user = await sessionUser(req);
  if (!user) {
    throw new ApiError(
      "UNAUTHENTICATED",
      "Send `Authorization: Bearer <key>` (a runtime key `stl_rk_…` or a personal access token `stl_pat_…`), or sign in.",
    );
  }
  assertSameOrigin(req);
  return user;
}

export async function authenticate(
  db: Db,
  req: Request,
  mode: AuthMode,
  permission?: Permission,
  /** The one route a person whose password must change may use: changing it. */
  whilePasswordMustChange = false,
): Promise<Principal> {
  // A runtime route needs a key: no session is read (nor its settings touched) to refuse a request without one.
  if (mode === "runtime" && !bearerToken(req)) {
    throw new ApiError(
      "UNAUTHENTICATED",
      "Send `Authorization: Bearer <runtime key>` (a runtime ingest key, `stl_rk_…`).",
    );
  }
  const principal = await identify(db, req);
  if (mode === "runtime" && principal.kind !== "runtime") {
    throw new ApiError("FORBIDDEN", "Only a runtime ingest key (`stl_rk_…`) can send records.");
  }
  if ((mode === "user" || mode === "session") && principal.kind !== "user") {
    throw new ApiError("FORBIDDEN", "This needs a person: sign in, or use a personal access token (`stl_pat_…`).");
  }
  if (mode === "session" && principal.kind === "user" && principal.via !== "session") {
    throw new ApiError(
      "FORBIDDEN",
      "Only a signed-in session can do this, not a token: sign in to the console (Account → Tokens).",
      { needs: "session" },
    );
  }
  if (principal.kind === "user" && principal.via === "session" && !whilePasswordMustChange) {
    if (principal.user.passwordMustChange)
      throw new ApiError(
        "PASSWORD_CHANGE_REQUIRED",
        "An admin reset your password to a temporary one: choose your own first (Account → Password, or POST /api/v1/me/password).",
      );
  }
  if (principal.kind === "user" && permission && !can(principal.user.role, permission)) {
    throw new ApiError("FORBIDDEN", `Your role (${principal.user.role}) may not do this.`, {
      role: principal.user.role,
      needs: permission,
    });
  }
  return principal;
}
