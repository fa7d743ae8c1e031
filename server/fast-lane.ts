import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import {
  RSC_HEADER,
  NEXT_ROUTER_PREFETCH_HEADER,
  NEXT_ROUTER_SEGMENT_PREFETCH_HEADER,
  NEXT_ROUTER_STATE_TREE_HEADER,
} from "next/dist/client/components/app-router-headers";
import { publicUrl } from "@/lib/env";
import { toErrorResponse } from "@/lib/http/route";
import {
  API_CONTENT_SECURITY_POLICY,
  SECURITY_HEADERS,
  STRICT_TRANSPORT_SECURITY,
  needsTransportSecurity,
} from "@/lib/http/security-headers";
import { bodyStream } from "./node-body";
import { matchRoute, routeTable, type RouteMatch } from "./routes";
import { processWide } from "@/lib/process-wide";

// The runtime's hot routes served by bin/settle-server.mjs without Next.js's
// request pipeline (docs/decisions/024-fast-lane.md): the routes whose
// withRoute declaration says `hot: true`, found in the one route registry
// (server/routes.ts), their same handlers called with a Request built straight
// from node's request, and their Response written back with the headers
// next.config.ts and proxy.ts give every API answer. Anything that is not
// exactly one of these routes — another method, a trailing slash, a path whose
// %-escapes do not decode — is left to Next.js, so its answer stays Next.js's.

/** On every answer the lane sends; never on Next.js's. */
export const SERVED_BY_HEADER = "x-settle-served-by";

/** The hot routes, in the registry's order. */
export const laneRoutes = routeTable.filter((entry) => entry.handler.route.hot);

export type LaneHit = RouteMatch;

/** The lane for this request and its path parameters (decoded as Next.js decodes them), or null: Next.js serves it. */
export function laneFor(method: string, url: string): LaneHit | null {
  if (!url.startsWith("/api/v1/") && !url.startsWith("/v1/")) return null;
  const query = url.indexOf("?");
  return matchRoute(laneRoutes, method, query === -1 ? url : url.slice(0, query));
}

// What Next.js 16 says every app route's answer varies by (its router's request headers, the same
// constants it builds its Vary from), and, on an answer with a body its compression could encode,
// Accept-Encoding. The lane never compresses (the same bytes whatever the client accepts, which HTTP
// allows) but says the same, so a cache in front treats both alike.
const NEXT_VARY = [
  RSC_HEADER,
  NEXT_ROUTER_STATE_TREE_HEADER,
  NEXT_ROUTER_PREFETCH_HEADER,
  NEXT_ROUTER_SEGMENT_PREFETCH_HEADER,
].join(", ");

/**
 * The headers Next.js adds to an API answer: next.config.ts's static ones
 * (every response) and API CSP, and proxy.ts's HSTS when served over https.
 * The Vary header is added with the answer (sendWebResponse).
 */
export function apiHeaders(req: IncomingMessage): Array<[string, string]> {
  const headers: Array<[string, string]> = SECURITY_HEADERS.map((h) => [h.key, h.value]);
  headers.push(["Content-Security-Policy", API_CONTENT_SECURITY_POLICY]);
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  if (needsTransportSecurity(encrypted, publicUrl()))
    headers.push([STRICT_TRANSPORT_SECURITY.key, STRICT_TRANSPORT_SECURITY.value]);
  return headers;
}

/** A web Request of node's request, as Next.js builds one: the headers as node parsed them (with the server's own), the body unread. */
export function toWebRequest(req: IncomingMessage, signal?: AbortSignal, body: Readable = req): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.append(name, value);
  }
  let origin = "http://localhost";
  const host = req.headers.host;
  if (host && /^[\w.:[\]-]+$/.test(host)) origin = `http://${host}`;
  const method = req.method ?? "GET";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal };
  if (method !== "GET" && method !== "HEAD") {
    init.body = bodyStream(body);
    init.duplex = "half";
  }
  return new Request(new URL(req.url ?? "/", origin), init);
}

/** Writes a web Response to node's response, after `extra` headers (which the Response's own override), and Next.js's Vary. */
export async function sendWebResponse(
  res: ServerResponse,
  response: Response,
  extra: ReadonlyArray<[string, string]> = [],
  vary = true,
): Promise<void> {
  for (const [name, value] of extra) res.setHeader(name, value);
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (vary) res.setHeader("Vary", response.headers.has("content-type") ? `${NEXT_VARY}, Accept-Encoding` : NEXT_VARY);
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : null;
  res.end(body && body.length > 0 ? body : undefined);
}

/**
 * Answers a request of `lane`: the route's Response with the API headers.
 * The route reads the body from `body` (node's request itself, unless a test
 * hands over a copy) once it has authenticated. Returns the status sent.
 */
export async function answerLane(
  req: IncomingMessage,
  res: ServerResponse,
  hit: LaneHit,
  body: Readable = req,
): Promise<number> {
  const extra = apiHeaders(req);
  // Which way in served the answer: for an operator who suspects the lane (SETTLE_FAST_LANE=off), and for
  // the test that every hot route is served here under `npm start`.
  extra.push([SERVED_BY_HEADER, "fast-lane"]);
  try {
    // The route hears of a client that went away (a long-polled decision stops polling).
    const controller = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const response = await hit.entry.handler(toWebRequest(req, controller.signal, body), {
      params: Promise.resolve(hit.params),
    });
    // The client's request broke off while it was being read: there is nobody to answer.
    if (res.destroyed) return response.status;
    await sendWebResponse(res, response, extra);
    return response.status;
  } catch (error) {
    // withRoute answers every failure of the route itself; this is the net under the lane's own code.
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return 500;
    }
    const response = toErrorResponse(error, "req_fast_lane");
    await sendWebResponse(res, response, extra);
    return response.status;
  }
}

/** Serves the request if it is one of the hot routes and returns true; false: hand it to Next.js. */
export function fastLane(req: IncomingMessage, res: ServerResponse): boolean {
  const hit = laneFor(req.method ?? "GET", req.url ?? "/");
  if (!hit) return false;
  void answerLane(req, res, hit);
  return true;
}

/** Called by instrumentation.ts: bin/settle-server.mjs finds the lane as `fastLane` (lib/process-wide.ts). */
export function registerFastLane(): void {
  processWide("fastLane", () => fastLane);
}
