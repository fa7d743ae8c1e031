import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as envelopes from "../../app/api/v1/envelopes/route";
import * as guard from "../../app/api/v1/guard/route";
import * as decision from "../../app/api/v1/invocations/[invocation_id]/decision/route";
import * as otlpTraces from "../../app/v1/traces/route";
import * as apiOtlpTraces from "../../app/api/v1/otlp/v1/traces/route";
import { publicUrl } from "../env";
import { MAX_BODY_BYTES } from "./ingest-body";
import { MAX_JSON_BODY, toErrorResponse, type RouteHandler } from "./route";
import { API_CONTENT_SECURITY_POLICY, SECURITY_HEADERS, STRICT_TRANSPORT_SECURITY } from "./security-headers";

// The runtime's hot routes served by bin/settle-server.mjs without Next.js's
// request pipeline (docs/decisions/024-fast-lane.md): the same withRoute
// handlers, called with a Request built straight from node's request, and
// their Response written back with the headers next.config.ts and proxy.ts
// give every API answer. Anything that is not exactly one of these routes —
// another method, a trailing slash, a path whose %-escapes do not decode —
// is left to Next.js, so its answer stays Next.js's.

type Params = Record<string, string>;
type Lane = { method: "GET" | "POST"; pattern: RegExp; names: readonly string[]; handler: RouteHandler; maxBody: number };

const LANES: readonly Lane[] = [
  { method: "POST", pattern: /^\/api\/v1\/guard$/, names: [], handler: guard.POST, maxBody: MAX_JSON_BODY },
  { method: "POST", pattern: /^\/api\/v1\/envelopes$/, names: [], handler: envelopes.POST, maxBody: MAX_BODY_BYTES },
  { method: "GET", pattern: /^\/api\/v1\/invocations\/([^/]+)\/decision$/, names: ["invocation_id"], handler: decision.GET, maxBody: 0 },
  // OTLP trace export: its body limit is the same 1 MiB as sent (lib/http/otlp.ts inflates gzip itself).
  { method: "POST", pattern: /^\/v1\/traces$/, names: [], handler: otlpTraces.POST, maxBody: MAX_BODY_BYTES },
  { method: "POST", pattern: /^\/api\/v1\/otlp\/v1\/traces$/, names: [], handler: apiOtlpTraces.POST, maxBody: MAX_BODY_BYTES },
];

export type LaneHit = { lane: Lane; params: Params };

/** The lane for this request and its path parameters (decoded as Next.js decodes them), or null: Next.js serves it. */
export function laneFor(method: string, url: string): LaneHit | null {
  if (!url.startsWith("/api/v1/") && !url.startsWith("/v1/")) return null;
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  for (const lane of LANES) {
    if (lane.method !== method) continue;
    const match = lane.pattern.exec(path);
    if (!match) continue;
    const params: Params = {};
    try {
      lane.names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1]!)));
    } catch {
      return null;
    }
    return { lane, params };
  }
  return null;
}

// What Next.js 16 says every app route's answer varies by (its router's request headers), and, on
// an answer with a body its compression could encode, Accept-Encoding. The lane never compresses
// (the same bytes whatever the client accepts, which HTTP allows) but says the same, so a cache in
// front treats both alike.
const NEXT_VARY = "rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch";

/**
 * The headers Next.js adds to an API answer: next.config.ts's static ones
 * (every response) and API CSP, and proxy.ts's HSTS when served over https.
 * The Vary header is added with the answer (sendWebResponse).
 */
export function apiHeaders(req: IncomingMessage): Array<[string, string]> {
  const headers: Array<[string, string]> = SECURITY_HEADERS.map((h) => [h.key, h.value]);
  headers.push(["Content-Security-Policy", API_CONTENT_SECURITY_POLICY]);
  // As proxy.ts's overHttps: the request's own protocol (X-Forwarded-Proto does not change it) or the configured address.
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  if (encrypted || publicUrl().startsWith("https:")) headers.push([STRICT_TRANSPORT_SECURITY.key, STRICT_TRANSPORT_SECURITY.value]);
  return headers;
}

/**
 * The body, up to one byte past `limit`: a body declared larger is not read
 * at all, one that turns out larger stops being read. Either way the route's
 * own reader (lib/http/read-body.ts) refuses it, with the answer it always gives.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off("data", onData);
      req.off("end", done);
      req.off("error", fail);
      req.off("close", closed);
    };
    const done = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const fail = (error: Error) => {
      stop();
      reject(error);
    };
    const closed = () => fail(new Error("the request was closed before its body ended"));
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) done();
    };
    req.on("data", onData);
    req.on("end", done);
    req.on("error", fail);
    req.on("close", closed);
  });
}

/** A web Request of node's request, as Next.js builds one: the headers as node parsed them (with the server's own). */
export function toWebRequest(req: IncomingMessage, body: Buffer | null, signal?: AbortSignal): Request {
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
  return new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    body: body && body.length > 0 && method !== "GET" && method !== "HEAD" ? (body as Uint8Array<ArrayBuffer>) : undefined,
    signal,
  });
}

/** Writes a web Response to node's response, after `extra` headers (which the Response's own override), and Next.js's Vary. */
export async function sendWebResponse(res: ServerResponse, response: Response, extra: ReadonlyArray<[string, string]> = [], vary = true): Promise<void> {
  for (const [name, value] of extra) res.setHeader(name, value);
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (vary) res.setHeader("Vary", response.headers.has("content-type") ? `${NEXT_VARY}, Accept-Encoding` : NEXT_VARY);
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : null;
  res.end(body && body.length > 0 ? body : undefined);
}

/**
 * Answers a request of `lane` whose body was read (null for a GET): the
 * route's Response with the API headers. Returns the status sent.
 */
export async function answerLane(req: IncomingMessage, res: ServerResponse, hit: LaneHit, body: Buffer | null): Promise<number> {
  const extra = apiHeaders(req);
  try {
    // The route hears of a client that went away (a long-polled decision stops polling).
    const controller = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const response = await hit.lane.handler(toWebRequest(req, body, controller.signal), { params: Promise.resolve(hit.params) });
    await sendWebResponse(res, response, extra);
    return response.status;
  } catch (error) {
    // withRoute answers every failure of the route itself; this is the net under the lane's own code.
    if (res.headersSent) {
      res.destroy();
      return 500;
    }
    const response = toErrorResponse(error, "req_fast_lane");
    await sendWebResponse(res, response, extra);
    return response.status;
  }
}

async function serve(req: IncomingMessage, res: ServerResponse, hit: LaneHit): Promise<void> {
  let body: Buffer | null = null;
  try {
    body = hit.lane.method === "GET" ? null : await readBody(req, hit.lane.maxBody);
  } catch {
    // The client's request broke off while it was being read: there is nobody to answer.
    res.destroy();
    return;
  }
  await answerLane(req, res, hit, body);
}

/** Serves the request if it is one of the hot routes and returns true; false: hand it to Next.js. */
export function fastLane(req: IncomingMessage, res: ServerResponse): boolean {
  const hit = laneFor(req.method ?? "GET", req.url ?? "/");
  if (!hit) return false;
  void serve(req, res, hit);
  return true;
}

const holder = globalThis as typeof globalThis & { __settleFastLane?: typeof fastLane };

/** Called by instrumentation.ts: bin/settle-server.mjs finds the lane on globalThis. */
export function registerFastLane(): void {
  holder.__settleFastLane = fastLane;
}
