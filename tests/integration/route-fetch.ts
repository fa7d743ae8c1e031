import { getDecision, getInvocation, guard, ingest } from "./routes";

// A `fetch` that hands requests to Settle's runtime route handlers in this
// process, the way Next.js would, so a client (the @settle/client SDK) runs
// against the real API without an HTTP server. Unknown paths answer 404.

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Route = { method: string; pattern: RegExp; param?: string; handler: Handler };

const routes: Route[] = [
  { method: "POST", pattern: /^\/api\/v1\/envelopes$/, handler: ingest },
  { method: "POST", pattern: /^\/api\/v1\/guard$/, handler: guard },
  { method: "GET", pattern: /^\/api\/v1\/invocations\/([^/]+)\/decision$/, param: "invocation_id", handler: getDecision },
  { method: "GET", pattern: /^\/api\/v1\/invocations\/([^/]+)$/, param: "invocation_id", handler: getInvocation },
];

export async function routeFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const req = new Request(input, init);
  const { pathname } = new URL(req.url);
  for (const route of routes) {
    const match = route.pattern.exec(pathname);
    if (!match || route.method !== req.method) continue;
    const params = route.param ? { [route.param]: decodeURIComponent(match[1]!) } : {};
    return route.handler(req, { params: Promise.resolve(params) });
  }
  return new Response(JSON.stringify({ ok: false, code: "NOT_FOUND" }), { status: 404, headers: { "content-type": "application/json" } });
}
