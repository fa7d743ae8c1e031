import { NextResponse, type NextRequest } from "next/server";
import { errorEnvelope, statusOf } from "@/lib/api/errors";

// Runs before Next.js routes a request:
// - An address whose %-escapes do not decode would fail in the router, before
//   any of Settle's code, with a plain "Internal Server Error". It is answered
//   here: 400 in Settle's error envelope for the API, a short page otherwise.
// - For pages, tells server components which page was asked for, so a
//   signed-out visitor is sent to sign-in and then back to that page (a deep
//   link survives). Authorization itself happens in the pages and routes.

function decodes(pathname: string): boolean {
  try {
    for (const segment of pathname.split("/")) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  if (!decodes(pathname)) {
    const message = "The address has a %-escape that is not valid UTF-8 (e.g. a lone % or %E0%A4%A); encode each path segment with encodeURIComponent.";
    if (pathname.startsWith("/api/")) {
      return NextResponse.json(errorEnvelope("INVALID_REQUEST", message, "req_undecodable_path", { path: pathname }), { status: statusOf("INVALID_REQUEST") });
    }
    return new NextResponse(`Bad request: ${message}\n`, { status: 400, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  if (pathname.startsWith("/api/")) return NextResponse.next();
  const headers = new Headers(request.headers);
  headers.set("x-settle-path", pathname + search);
  return NextResponse.next({ request: { headers } });
}

// API requests reach the proxy only when their address has a %-escape (so the hot ingest path never does).
export const config = { matcher: ["/((?!api/|_next/|favicon.ico).*)", "/api/:path(.*%.*)"] };
