import { matchRoute, routeTable } from "@/server/routes";

// A `fetch` that hands requests to Settle's route handlers in this process,
// the way Next.js would (every route of the registry, server/routes.ts), so a
// client (the @settle/client SDK) runs against the real API without an HTTP
// server. Unknown paths answer 404.

export async function routeFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const req = new Request(input, init);
  const hit = matchRoute(routeTable, req.method, new URL(req.url).pathname);
  if (hit) return hit.entry.handler(req, { params: Promise.resolve(hit.params) });
  return new Response(JSON.stringify({ ok: false, code: "NOT_FOUND" }), {
    status: 404,
    headers: { "content-type": "application/json" },
  });
}
