import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { errorResponse } from "@/lib/http/route";
import { answerLane, laneFor } from "@/lib/http/fast-lane";
import { GET as notFound } from "@/app/api/[...path]/route";
import { apiOtlpTraces, getDecision, getInvocation, getTask, guard, health, ingest, invocationActions, listInvocations, openapi, otlpTraces, ownToolCatalog } from "./routes";

// Serves Settle's route handlers over a real node:http server on a random
// localhost port, so HTTP clients (the CLI) can be tested end to end without
// a Next.js build. Routing mirrors app/api's folders (and app/v1, OTLP's). The hot
// routes go through the fast lane (lib/http/fast-lane.ts), as `npm start` serves them.

type Params = Record<string, string>;
type Handler = (req: Request, ctx: { params: Promise<Params> }) => Promise<Response>;
type Route = { method: string; pattern: RegExp; names: string[]; handler: Handler };

const routes: Route[] = [
  { method: "POST", pattern: /^\/api\/v1\/envelopes$/, names: [], handler: ingest },
  { method: "POST", pattern: /^\/v1\/traces$/, names: [], handler: otlpTraces },
  { method: "POST", pattern: /^\/api\/v1\/otlp\/v1\/traces$/, names: [], handler: apiOtlpTraces },
  { method: "GET", pattern: /^\/api\/v1\/invocations$/, names: [], handler: listInvocations },
  { method: "GET", pattern: /^\/api\/v1\/invocations\/([^/]+)$/, names: ["invocation_id"], handler: getInvocation },
  { method: "GET", pattern: /^\/api\/v1\/invocations\/([^/]+)\/decision$/, names: ["invocation_id"], handler: getDecision },
  { method: "POST", pattern: /^\/api\/v1\/invocations\/([^/]+)\/actions$/, names: ["invocation_id"], handler: invocationActions },
  { method: "POST", pattern: /^\/api\/v1\/guard$/, names: [], handler: guard },
  { method: "GET", pattern: /^\/api\/v1\/tasks\/([^/]+)$/, names: ["task_id"], handler: getTask },
  { method: "GET", pattern: /^\/api\/v1\/tool-catalog$/, names: [], handler: ownToolCatalog },
  { method: "GET", pattern: /^\/api\/health$/, names: [], handler: health },
  { method: "GET", pattern: /^\/api\/v1\/openapi\.json$/, names: [], handler: openapi },
];

export type ServedRequest = { method: string; path: string; contentType: string | null; bytes: number; status: number };

/** Returns a Response to answer in place of Settle (fault injection), or null to pass the request on. */
export type Interceptor = (req: { method: string; path: string; count: number }) => Response | null;

export type TestServer = {
  url: string;
  /** Every request served, in order. */
  requests: ServedRequest[];
  intercept: (fn: Interceptor | null) => void;
  close: () => Promise<void>;
};

function toRequest(req: IncomingMessage, origin: string, body: Buffer): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  return new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : new Uint8Array(body),
  });
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function sendResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (response.body) {
    for await (const chunk of Readable.fromWeb(response.body as never)) res.write(chunk);
  }
  res.end();
}

function route(method: string, path: string): { handler: Handler; params: Params } {
  const matches = routes.filter((r) => r.pattern.test(path));
  const hit = matches.find((r) => r.method === method);
  if (hit) {
    const values = hit.pattern.exec(path)!.slice(1).map(decodeURIComponent);
    return { handler: hit.handler, params: Object.fromEntries(hit.names.map((n, i) => [n, values[i]!])) };
  }
  if (matches.length > 0) {
    return { handler: async () => errorResponse("METHOD_NOT_ALLOWED", `${method} is not supported on ${path}.`, "req_test"), params: {} };
  }
  return { handler: async (req) => notFound(req), params: {} };
}

export async function startServer(): Promise<TestServer> {
  const requests: ServedRequest[] = [];
  let interceptor: Interceptor | null = null;
  let origin = "";
  const server = createServer((req, res) => {
    void (async () => {
      const method = req.method ?? "GET";
      const path = new URL(req.url ?? "/", origin).pathname;
      const body = await readBody(req);
      const served: ServedRequest = { method, path, contentType: req.headers["content-type"] ?? null, bytes: body.length, status: 0 };
      requests.push(served);
      const injected = interceptor?.({ method, path, count: requests.length });
      const lane = injected ? null : laneFor(method, req.url ?? "/");
      if (lane) {
        // The body, read here to be counted, is handed to the lane as node's request would be.
        served.status = await answerLane(req, res, lane, Readable.from(body.length > 0 ? [body] : []));
        return;
      }
      const { handler, params } = route(method, path);
      const response = injected ?? (await handler(toRequest(req, origin, body), { params: Promise.resolve(params) }));
      served.status = response.status;
      await sendResponse(res, response);
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    requests,
    intercept: (fn) => {
      interceptor = fn;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
