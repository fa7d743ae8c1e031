import { NextResponse, type NextRequest } from "next/server";

// Tells server components which page was asked for, so a signed-out visitor
// is sent to sign-in and then back to that page (a deep link survives).
// Authorization itself happens in the pages and routes, never here.
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set("x-settle-path", request.nextUrl.pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = { matcher: ["/((?!api/|_next/|favicon.ico).*)"] };
