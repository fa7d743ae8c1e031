import { toNextJsHandler } from "better-auth/next-js";
import { getDb } from "../db/client";
import { ApiError } from "../errors";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../ingest/json-depth";
import { readBodyLimited } from "./read-body";
import { errorResponse, MAX_JSON_BODY, toErrorResponse } from "./route";
import { CLIENT_ADDRESS_HEADER, clientIpOf } from "../identity/client-ip";
import { env, publicUrl } from "../env";
import { accountLockedUntil, clearFailedSignIns, recordFailedSignIn } from "../identity/account-lock";
import { getAuth } from "../identity/auth";

// In front of Better Auth's endpoints (/api/auth/*):
// - its admin plugin's endpoints answer 404: people are managed only through
//   Settle's own admin API, which keeps Settle's rules (last admin, audit,
//   token revocation) — impersonation in particular would let one admin act
//   under another person's name;
// - the client address it rate-limits by is the one lib/identity/client-ip.ts
//   computed, never a header the client sent;
// - failed sign-ins are counted per account as well as per address;
// - an "Invalid origin" refusal says which address to open instead;
// - a body is read through Settle's bounded reader (at most 64 KiB, refused
//   by its Content-Length before a byte is read) and a JSON body nested
//   deeper than Settle's JSON bodies may be is refused, before Better Auth
//   reads either: these endpoints answer anyone, signed in or not.

const ADMIN_PATH = /^\/api\/auth\/admin(\/|$)/;
const SIGN_IN_PATH = "/api/auth/sign-in/email";

function withClientAddress(req: Request, body: string | null): Request {
  const headers = new Headers(req.headers);
  headers.delete(CLIENT_ADDRESS_HEADER);
  const ip = clientIpOf(req.headers);
  if (ip) headers.set(CLIENT_ADDRESS_HEADER, ip);
  return new Request(req.url, { method: req.method, headers, body, signal: req.signal });
}

type AuthBody = { text: string; json: unknown };

async function readAuthBody(req: Request): Promise<AuthBody> {
  const text = await readBodyLimited(req, MAX_JSON_BODY, "A sign-in (or any other account request) is far smaller.");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: Better Auth answers it as it answers any body it cannot read.
    return { text, json: undefined };
  }
  if (nestsDeeperThan(json, MAX_JSON_DEPTH)) {
    throw new ApiError(
      "INVALID_REQUEST",
      `The body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`,
      { limit_depth: MAX_JSON_DEPTH },
    );
  }
  return { text, json };
}

function emailOf(body: AuthBody): string | null {
  const email = (body.json as { email?: unknown } | null | undefined)?.email;
  return typeof email === "string" && email.length <= 320 ? email : null;
}

async function explainOrigin(res: Response, req: Request): Promise<Response> {
  if (res.status !== 403) return res;
  const text = await res.clone().text();
  if (!/origin/i.test(text)) return res;
  const from = req.headers.get("origin") ?? "this address";
  const expected = new URL(publicUrl()).origin;
  return errorResponse(
    "INVALID_ORIGIN",
    `Settle is configured for ${expected} (${env().SETTLE_PUBLIC_URL ? "SETTLE_PUBLIC_URL" : "the default address"}) but this page was opened at ${from}. Open ${expected}/sign-in, or set SETTLE_PUBLIC_URL=${from} and restart Settle.`,
    "req_auth",
    { expected_origin: expected, origin: from },
  );
}

async function signIn(req: Request, handlers: ReturnType<typeof toNextJsHandler>): Promise<Response> {
  const body = await readAuthBody(req);
  const email = emailOf(body);
  const db = await getDb();
  if (email) {
    const until = await accountLockedUntil(db, email);
    if (until) {
      const minutes = Math.max(1, Math.ceil((until.getTime() - Date.now()) / 60_000));
      throw new ApiError(
        "RATE_LIMITED",
        `Too many failed sign-ins for this account. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}, or ask an admin to set a new password.`,
        { retry_after_s: Math.ceil((until.getTime() - Date.now()) / 1000) },
      );
    }
  }
  const res = await explainOrigin(await handlers.POST(withClientAddress(req, body.text)), req);
  if (email && res.status === 401) await recordFailedSignIn(db, email);
  if (email && res.ok) await clearFailedSignIns(db, email);
  return res;
}

export async function handleAuthRequest(req: Request): Promise<Response> {
  try {
    const { pathname } = new URL(req.url);
    if (ADMIN_PATH.test(pathname)) {
      throw new ApiError("NOT_FOUND", "Not found. People are managed in Settle's admin pages and /api/v1/admin/users.");
    }
    const handlers = toNextJsHandler(await getAuth());
    if (req.method === "POST" && pathname === SIGN_IN_PATH) return await signIn(req, handlers);
    const body = req.method === "GET" || req.method === "HEAD" ? null : (await readAuthBody(req)).text;
    const forwarded = withClientAddress(req, body);
    return await explainOrigin(await (req.method === "GET" ? handlers.GET(forwarded) : handlers.POST(forwarded)), req);
  } catch (error) {
    return toErrorResponse(error, "req_auth");
  }
}
