import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { errorResponse } from "@/lib/http/route";
import { answerLane, laneFor } from "@/server/fast-lane";
import { matchRoute, routeTable } from "@/server/routes";
import { GET as notFound } from "@/app/api/[...path]/route";

// Serves Settle's route handlers over a real node:http server on a random
// localhost port, so HTTP clients (the CLI) can be tested end to end without
// a Next.js build. Every route of the registry (server/routes.ts) is served;
// the hot ones go through the fast lane (server/fast-lane.ts), as `npm start` serves them.

type Params = Record<string, string>;
type Handler = (req: Request, ctx: { params: Promise<Params> }) => Promise<Response>;

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
  const hit = matchRoute(routeTable, method, path);
  if (hit) return { handler: hit.entry.handler, params: hit.params };
  if (routeTable.some((entry) => entry.pattern.test(path))) {
    return {
      handler: async () => errorResponse("METHOD_NOT_ALLOWED", `${method} is not supported on ${path}.`, "req_test"),
      params: {},
    };
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
      const served: ServedRequest = {
        method,
        path,
        contentType: req.headers["content-type"] ?? null,
        bytes: body.length,
        status: 0,
      };
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
