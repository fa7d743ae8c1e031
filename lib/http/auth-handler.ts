import { toNextJsHandler } from "better-auth/next-js";
import { getDb } from "../db/client";
import { ApiError } from "../errors";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../json/depth";
import { readBodyLimited } from "./read-body";
import { errorResponse, MAX_JSON_BODY, toErrorResponse } from "./route";
import { CLIENT_ADDRESS_HEADER, clientIpOf } from "../identity/client-ip";
import { env, publicUrl } from "../env";
import { assertAccountOpen, clearFailedSignIns, recordFailedSignIn } from "../identity/account-lock";
import { getAuth } from "../identity/auth";

// In front of Better Auth's endpoints (/api/auth/*):
// - only sign-in, sign-out and the session are served; every other endpoint
//   (its admin plugin, its own password endpoints…) answers 404 (SERVED below);
// - the client address it rate-limits by is the one lib/identity/client-ip.ts
//   computed, never a header the client sent;
// - failed sign-ins are counted per account as well as per address;
// - an "Invalid origin" refusal says which address to open instead;
// - a body is read through Settle's bounded reader (at most 64 KiB, refused
//   by its Content-Length before a byte is read) and a JSON body nested
//   deeper than Settle's JSON bodies may be is refused, before Better Auth
//   reads either: these endpoints answer anyone, signed in or not.

const SIGN_IN_PATH = "/api/auth/sign-in/email";

/**
 * The only Better Auth endpoints Settle serves: sign in, sign out, read the session (and its health and error
 * pages). Everything else answers 404 — its admin plugin (people are managed through Settle's admin API, which
 * keeps the last admin, audits and revokes tokens; impersonation would let one admin act as another), its own
 * password endpoints (change, reset, verify: they skip Settle's audit, the sessions a change must end, the reset
 * links it must spend and the account lock), changing one's name or email, deleting oneself, and whatever a
 * later version adds.
 */
const SERVED: ReadonlySet<string> = new Set([
  `POST ${SIGN_IN_PATH}`,
  "POST /api/auth/sign-out",
  "GET /api/auth/get-session",
  "GET /api/auth/ok",
  "GET /api/auth/error",
]);

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
  if (email) await assertAccountOpen(db, email);
  const res = await explainOrigin(await handlers.POST(withClientAddress(req, body.text)), req);
  if (email && res.status === 401) await recordFailedSignIn(db, email);
  if (email && res.ok) await clearFailedSignIns(db, email);
  return res;
}

export async function handleAuthRequest(req: Request): Promise<Response> {
  try {
    const { pathname } = new URL(req.url);
    if (!SERVED.has(`${req.method} ${pathname}`)) {
      throw new ApiError(
        "NOT_FOUND",
        "Not found. Change your password on the Account page (POST /api/v1/me/password); people and their passwords are managed in Settle's admin pages and /api/v1/admin/users.",
      );
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
