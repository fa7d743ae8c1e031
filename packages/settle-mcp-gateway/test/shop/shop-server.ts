import { AsyncLocalStorage } from "node:async_hooks";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { randomUUID } from "node:crypto";
import { createMcpHandler, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createShop } from "./shop-tools.js";

// The shop's process: `--stdio` serves one client on stdin/stdout (both
// protocol eras, through the SDK's serveStdio), `--http <port>` serves
// Streamable HTTP through the SDK's createMcpHandler (2026-07-28, and 2025
// clients statelessly), `--http-sessions <port>` serves 2025 clients with
// sessions (the SDK's sessionful transport, one per Mcp-Session-Id), and
// prints "listening <port>" once it does.

const socketOf = new AsyncLocalStorage<Socket>();

function toRequest(req: IncomingMessage, body: Buffer): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  return new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`), {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : new Uint8Array(body),
  });
}

/** One shop and one sessionful transport per 2025 session. */
function sessionfulHandler(): (request: Request) => Promise<Response> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return async (request) => {
    const id = request.headers.get("mcp-session-id");
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id)
        return new Response(
          JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
          { status: 404 },
        );
      const created = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => void sessions.set(sid, created),
      });
      await createShop({ breakStream: () => socketOf.getStore()?.destroy() }).connect(created);
      transport = created;
    }
    return transport.handleRequest(request);
  };
}

async function serveHttp(port: number, withSessions: boolean): Promise<void> {
  const handler = withSessions
    ? { fetch: sessionfulHandler() }
    : createMcpHandler(() => createShop({ breakStream: () => socketOf.getStore()?.destroy() }));
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      await socketOf.run(req.socket, async () => {
        const response = await handler.fetch(toRequest(req, Buffer.concat(chunks)));
        // forEach, not entries(): Headers' iterators are in lib "DOM.Iterable", which the packages leave out.
        const headers: Record<string, string> = {};
        response.headers.forEach((value, name) => (headers[name] = value));
        res.writeHead(response.status, headers);
        if (response.body)
          Readable.fromWeb(response.body as never)
            .on("error", () => res.destroy())
            .pipe(res);
        else res.end();
      });
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
}

const [mode, port] = process.argv.slice(2);
if (mode === "--http" || mode === "--http-sessions") await serveHttp(Number(port ?? 0), mode === "--http-sessions");
else serveStdio(() => createShop({ breakStream: () => process.exit(18) }));
