import { NextResponse, type NextRequest } from "next/server";
import { errorEnvelope, statusOf } from "@/lib/errors";
import { env, publicUrl } from "@/lib/env";
import {
  API_CONTENT_SECURITY_POLICY,
  STRICT_TRANSPORT_SECURITY,
  contentSecurityPolicy,
  needsTransportSecurity,
  newNonce,
} from "@/lib/http/security-headers";

// Runs before Next.js routes a request:
// - An address whose %-escapes do not decode would fail in the router, before
//   any of Settle's code, with a plain "Internal Server Error". It is answered
//   here: 400 in Settle's error envelope for the API, a short page otherwise.
// - For pages, tells server components which page was asked for, so a
//   signed-out visitor is sent to sign-in and then back to that page (a deep
//   link survives). Authorization itself happens in the pages and routes.
// - For pages, makes a nonce and the Content-Security-Policy that allows
//   only scripts carrying it. The CSP goes on the request too: Next.js reads
//   the nonce from there and puts it on its own scripts (pages render per
//   request, so each gets its own). x-nonce is for any server component that
//   writes an inline script or style. HSTS is added when served over https.
// The static security headers (nosniff, X-Frame-Options, …) and the API's
// CSP come from next.config.ts, for every response; see lib/http/security-headers.ts.
// Proxy runs in the Node.js runtime (Next.js 16), so lib/env.ts works here.
// Guard, ingest and decision skip it under `npm start` (server/fast-lane.ts, decision 024): what it does
// to API answers (HSTS) the lane does too; anything more it does to them must be added there.

function decodes(pathname: string): boolean {
  try {
    for (const segment of pathname.split("/")) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

function withTransportSecurity(request: NextRequest, response: NextResponse): NextResponse {
  if (needsTransportSecurity(request.nextUrl.protocol === "https:", publicUrl()))
    response.headers.set(STRICT_TRANSPORT_SECURITY.key, STRICT_TRANSPORT_SECURITY.value);
  return response;
}

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  if (!decodes(pathname)) {
    const message =
      "The address has a %-escape that is not valid UTF-8 (e.g. a lone % or %E0%A4%A); encode each path segment with encodeURIComponent.";
    if (pathname.startsWith("/api/") || pathname.startsWith("/v1/")) {
      const response = NextResponse.json(
        errorEnvelope("INVALID_REQUEST", message, "req_undecodable_path", { path: pathname }),
        { status: statusOf("INVALID_REQUEST") },
      );
      response.headers.set("Content-Security-Policy", API_CONTENT_SECURITY_POLICY);
      return withTransportSecurity(request, response);
    }
    const response = new NextResponse(`Bad request: ${message}\n`, {
      status: 400,
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
    response.headers.set("Content-Security-Policy", API_CONTENT_SECURITY_POLICY);
    return withTransportSecurity(request, response);
  }
  if (pathname.startsWith("/api/") || pathname.startsWith("/v1/"))
    return withTransportSecurity(request, NextResponse.next());
  // Where checkers look for the key that signs evidence packs (docs/audit.md): the public keys route.
  if (pathname === "/.well-known/settle-evidence-key")
    return withTransportSecurity(request, NextResponse.rewrite(new URL("/api/v1/evidence-keys", request.url)));
  // /metrics is the console's metrics page for a browser and Prometheus's for a scraper (which never asks for HTML).
  if (pathname === "/metrics" && !(request.headers.get("accept") ?? "").includes("text/html"))
    return withTransportSecurity(request, NextResponse.rewrite(new URL(`/api/metrics${search}`, request.url)));
  const nonce = newNonce();
  const csp = contentSecurityPolicy(nonce, { dev: env().NODE_ENV === "development" });
  const headers = new Headers(request.headers);
  headers.set("x-settle-path", pathname + search);
  headers.set("x-nonce", nonce);
  headers.set("Content-Security-Policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("Content-Security-Policy", csp);
  return withTransportSecurity(request, response);
}

// API requests (and OTLP's /v1/) reach the proxy only when their address has a %-escape (so the hot ingest paths never do).
export const config = { matcher: ["/((?!api/|v1/|_next/|favicon.ico).*)", "/api/:path(.*%.*)", "/v1/:path(.*%.*)"] };
