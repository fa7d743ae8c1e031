import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import { createParser } from "eventsource-parser";
import type { ToolCatalog } from "./catalog.js";
import type { ClientReply, ToolCallParams } from "./forward.js";
import { createHttpElicitation } from "./http-elicitation.js";
import { accessFor, checkExposure, checkRequest, type HttpAccess } from "./http-access.js";
import { exchange, type Refusal } from "./http-exchange.js";
import { handleToolCall, type GatewayDeps } from "./tool-call.js";

// The Streamable HTTP gateway: `settle-mcp --listen <port> --upstream <url>`.
// It proxies HTTP exchanges, not protocol sessions, so whatever the client
// and the server agree on passes unchanged: both protocol eras (2025's
// initialize and Mcp-Session-Id, 2026-07-28's per-request envelope), their
// headers (MCP-Protocol-Version, Mcp-Method, Mcp-Param-*, Authorization),
// GET streams, DELETE, OAuth metadata. A POST whose body is a tools/call is
// the exception: it goes through Settle (tool-call.ts), and the server's
// notifications on the way (progress, logs) still reach the client live.
// Before any of that, http-access.ts decides whether the request may be
// served at all (Host, Origin, JSON, the bearer token).

export type HttpGatewayOptions = {
  port: number;
  host: string;
  upstream: string;
  deps: Omit<GatewayDeps, "annotations">;
  catalog: ToolCatalog;
  /** Largest request body read (a tools/call's arguments included). */
  maxBodyBytes?: number;
  /** Hosts and origins allowed besides the loopback names, and the bearer token (SETTLE_MCP_TOKEN) clients must send. */
  access?: { hosts?: string[]; origins?: string[]; token?: string | null };
  /** Told of each request refused by the access rules (one line each). */
  onRefused?: (message: string) => void;
};

export type HttpGateway = { port: number; url: string; close: () => Promise<void> };

// Host is the gateway's (checked, then replaced by fetch with the server's); the gateway's own token goes no further.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "host",
  "content-length",
  "settle-mcp-token",
]);
/** Requests whose Authorization held the gateway's token, not a credential for the server. */
const tokenInAuthorization = new WeakSet<IncomingMessage>();
// fetch decodes compressed bodies, so their encoding headers no longer describe what is sent on.
const DECODED = new Set(["content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"]);

function requestHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || (lower === "authorization" && tokenInAuthorization.has(req))) continue;
    headers.append(name, req.rawHeaders[i + 1]!);
  }
  return headers;
}

function copyResponseHeaders(from: Headers, res: ServerResponse): void {
  from.forEach((value, name) => {
    if (!DECODED.has(name.toLowerCase())) res.setHeader(name, value);
  });
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The MCP endpoint maps to the upstream URL; other paths (OAuth metadata) to the upstream's origin. */
function targetOf(upstream: URL, req: IncomingMessage): string {
  const incoming = new URL(req.url ?? "/", "http://gateway.local");
  if (incoming.pathname === "/" || incoming.pathname === upstream.pathname)
    return `${upstream.origin}${upstream.pathname}${incoming.search || upstream.search}`;
  return `${upstream.origin}${incoming.pathname}${incoming.search}`;
}

const isModern = (params: ToolCallParams) =>
  typeof params._meta?.[PROTOCOL_VERSION_META_KEY] === "string" &&
  !(params._meta[PROTOCOL_VERSION_META_KEY] as string).startsWith("2025");

export async function startHttpGateway(options: HttpGatewayOptions): Promise<HttpGateway> {
  const token = options.access?.token ?? null;
  checkExposure(options.host, token);
  let access: HttpAccess | null = null;
  const upstream = new URL(options.upstream);
  const deps: GatewayDeps = { ...options.deps, annotations: options.catalog.annotations };
  const instanceTask = `mcp-gateway:${randomUUID()}`;
  const limit = options.maxBodyBytes ?? 4 * 1024 * 1024;
  /** (session, client request id) → the ids the server knows the call by, for cancellations. */
  const inFlight = new Map<string, { abort: AbortController; upstreamIds: string[] }>();
  let counter = 0;

  const elicitation = createHttpElicitation();

  async function passThrough(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer | undefined,
    observe?: (m: unknown, headers: Headers) => void,
  ): Promise<void> {
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    let response: Response;
    try {
      response = await fetch(targetOf(upstream, req), {
        method: req.method,
        headers: requestHeaders(req),
        body: body && body.length > 0 ? new Uint8Array(body) : undefined,
        signal: abort.signal,
      });
    } catch (error) {
      if (!res.headersSent)
        res
          .writeHead(502, { "content-type": "text/plain" })
          .end(`settle-mcp: the server cannot be reached (${(error as Error).message})`);
      return;
    }
    res.statusCode = response.status;
    copyResponseHeaders(response.headers, res);
    if (!response.body) {
      observe?.(null, response.headers);
      return void res.end();
    }
    const type = response.headers.get("content-type") ?? "";
    if (observe && (type.includes("application/json") || type.includes("text/event-stream"))) {
      // A tools/list answer is short: read whole, looked at, passed on byte for byte.
      const bytes = Buffer.from(await response.arrayBuffer());
      const text = bytes.toString("utf8");
      const messages: string[] = [];
      if (type.includes("text/event-stream")) createParser({ onEvent: (e) => void messages.push(e.data) }).feed(text);
      else messages.push(text);
      for (const message of messages) {
        try {
          observe(JSON.parse(message), response.headers);
        } catch {
          // not ours to judge: passed on as it came
        }
      }
      return void res.end(bytes);
    }
    Readable.fromWeb(response.body as never)
      .on("error", () => res.destroy())
      .pipe(res);
  }

  function writeSse(res: ServerResponse, message: unknown): boolean {
    if (res.destroyed || res.writableEnded) return false;
    if (!res.headersSent) res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return true;
  }

  async function toolCall(
    req: IncomingMessage,
    res: ServerResponse,
    message: { id: string | number; params: ToolCallParams },
  ): Promise<void> {
    const session = (req.headers["mcp-session-id"] as string | undefined) ?? "";
    const key = `${session} ${JSON.stringify(message.id)}`;
    const entry = { abort: new AbortController(), upstreamIds: [] as string[] };
    inFlight.set(key, entry);
    const modern = isModern(message.params);
    // Closing the response stream is the 2026-07-28 way to cancel; a 2025 client's broken stream is not a cancellation.
    res.on("close", () => {
      if (modern && !res.writableFinished) entry.abort.abort();
    });
    let refusal: Refusal | null = null;
    const headers = requestHeaders(req);
    const dispatch = async (params: ToolCallParams) => {
      const id = `settle-gw:${(counter += 1)}`;
      entry.upstreamIds.push(id);
      const primary = params.name === message.params.name;
      const timeout = AbortSignal.timeout((deps.config.call_timeout_s + 60) * 1000);
      const signal = modern ? AbortSignal.any([timeout, entry.abort.signal]) : timeout;
      const result = await exchange({
        url: targetOf(upstream, req),
        headers,
        body: { jsonrpc: "2.0", id, method: "tools/call", params },
        id,
        signal,
        onInterim: (m) => {
          if (primary && !res.destroyed) writeSse(res, m);
        },
      });
      if (primary) refusal = result.refusal;
      return result.answer;
    };
    const lower = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v[0] : v]),
    );
    let reply: ClientReply;
    try {
      reply = await handleToolCall(
        deps,
        {
          params: message.params,
          headers: lower,
          sessionTask: session ? `mcp-session:${session}` : instanceTask,
          cancelled: entry.abort.signal,
          elicit: elicitation.forSession(session, (m) => writeSse(res, m)),
        },
        dispatch,
      );
    } catch (error) {
      reply = { kind: "error", error: { code: -32603, message: `settle-mcp: ${(error as Error).message}` } };
    } finally {
      inFlight.delete(key);
    }
    if (res.destroyed || res.writableEnded) return;
    const refused = refusal as Refusal | null;
    if (refused && reply.kind === "error" && !res.headersSent) {
      res.statusCode = refused.status;
      copyResponseHeaders(refused.headers, res);
      return void res.end(Buffer.from(refused.body));
    }
    if (reply.kind === "none") return void res.end();
    const out =
      reply.kind === "result"
        ? { jsonrpc: "2.0", id: message.id, result: reply.result }
        : { jsonrpc: "2.0", id: message.id, error: reply.error };
    if (res.headersSent) {
      writeSse(res, out);
      return void res.end();
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(out));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") return passThrough(req, res, undefined);
    const body = await readBody(req, limit);
    if (body === null)
      return void res.writeHead(413, { "content-type": "text/plain" }).end("settle-mcp: request body too large");
    let message: unknown;
    try {
      message = JSON.parse(body.toString("utf8"));
    } catch {
      return passThrough(req, res, body);
    }
    if (Array.isArray(message) && message.some((m) => m?.method === "tools/call")) {
      // Batches left the protocol in 2025-06-18; a tools/call in one would pass by the guard.
      const error = {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: "settle-mcp does not forward a tools/call inside a JSON-RPC batch; send it on its own",
        },
      };
      return void res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(error));
    }
    const m = message as { id?: string | number; method?: string; params?: Record<string, unknown> };
    if (elicitation.takeAnswer(m)) return void res.writeHead(202).end();
    if (m?.method === "tools/call" && m.id !== undefined && typeof m.params?.name === "string")
      return toolCall(req, res, { id: m.id, params: m.params as ToolCallParams });
    if (m?.method === "notifications/cancelled") {
      const session = (req.headers["mcp-session-id"] as string | undefined) ?? "";
      const call = inFlight.get(`${session} ${JSON.stringify(m.params?.requestId)}`);
      if (call) {
        call.abort.abort();
        const rewritten = call.upstreamIds.map((id) => ({ ...m, params: { ...m.params, requestId: id } }));
        return passThrough(req, res, Buffer.from(JSON.stringify(rewritten.length === 1 ? rewritten[0] : m)));
      }
    }
    if (m?.method === "initialize")
      return passThrough(req, res, body, (_, headers) =>
        elicitation.noteInitialize(m.params, headers.get("mcp-session-id")),
      );
    const learn =
      m?.method === "tools/list"
        ? (r: unknown) => options.catalog.learn((r as { result?: unknown })?.result)
        : undefined;
    return passThrough(req, res, body, learn);
  }

  const server = createServer((req, res) => {
    const checked = access ? checkRequest(req, access) : { refusal: { status: 503, message: "starting" } };
    if ("refusal" in checked) {
      const { status, message, headers } = checked.refusal;
      options.onRefused?.(`refused ${req.method} ${req.url} (HTTP ${status}): ${message}`);
      // The body is not read: the connection closes after the answer.
      res
        .writeHead(status, { "content-type": "application/json", connection: "close", ...headers })
        .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: `settle-mcp: ${message}` } }));
      return;
    }
    if (checked.carrier === "authorization") tokenInAuthorization.add(req);
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`settle-mcp: ${(error as Error).message}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  access = accessFor(
    { host: options.host, port },
    { hosts: options.access?.hosts ?? [], origins: options.access?.origins ?? [] },
    token,
  );
  return {
    port,
    url: `http://${options.host}:${port}/`,
    close: async () => {
      await Promise.race([Promise.all(deps.registry.pending()), new Promise((r) => setTimeout(r, 10_000).unref())]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
