import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  scratch,
  startHttpSession,
  startSettle,
  startShopHttp,
  type HttpSession,
  type Scratch,
  type SettleUnderTest,
  type ShopProcess,
} from "./mcp-gateway-support";

// Who may use the HTTP gateway. A web page can reach a gateway on 127.0.0.1:
// through DNS rebinding (Host: the attacker's name) or with a plain
// cross-site text/plain POST, which browsers send without asking first. Each
// such request is refused before it reaches the server (the shop's ledger
// stays empty); an SDK client at the gateway's own address still works; the
// bearer token, when set, is required and never passed on to the server.

const charge = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "charge_card", arguments: { order_id: `ord-evil-${id}`, amount_cents: 99_999, card_token: "tok_1" } },
});

/** A raw HTTP request, with a Host of our choosing (fetch would not send one). */
function rawPost(
  port: number,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += String(d)));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("the HTTP gateway's access rules (PostgreSQL)", () => {
  let settle: SettleUnderTest;
  let s: Scratch;
  let shop: ShopProcess;
  let http: HttpSession;
  let port: number;
  const charges = () => s.ledger().filter((l) => l.kind === "charge");

  beforeAll(async () => {
    settle = await startSettle("postgres");
    s = scratch();
    shop = await startShopHttp(s);
    http = await startHttpSession(settle, s, shop.url, undefined, { origins: ["http://localhost:6274"] });
    port = http.gateway.port;
  });
  afterAll(async () => {
    await http?.close();
    await shop?.stop();
    await settle?.close();
  });

  it("refuses the browser attack as reproduced: text/plain, Host evil.example, Origin http://evil.example, calling a money tool", async () => {
    const got = await rawPost(
      port,
      { host: "evil.example", origin: "http://evil.example", "content-type": "text/plain" },
      JSON.stringify(charge(1)),
    );
    expect(got.status).toBe(403);
    expect(JSON.parse(got.body).error.message).toMatch(/Host/);
    expect(charges()).toEqual([]);
  });

  it("refuses each of the three on its own: a rebound Host, a foreign Origin, a POST that is not JSON", async () => {
    const ok = { host: `127.0.0.1:${port}`, "content-type": "application/json" };
    expect((await rawPost(port, { ...ok, host: `evil.example:${port}` }, JSON.stringify(charge(2)))).status).toBe(403);
    expect((await rawPost(port, { ...ok, origin: "http://evil.example" }, JSON.stringify(charge(3)))).status).toBe(403);
    expect((await rawPost(port, { ...ok, "content-type": "text/plain" }, JSON.stringify(charge(4)))).status).toBe(415);
    expect((await rawPost(port, { ...ok, host: "127.0.0.1:1" }, JSON.stringify(charge(5)))).status).toBe(403);
    expect(charges()).toEqual([]);
  });

  it("serves an SDK client at its own address, and a browser page of an allowed origin", async () => {
    const client = await http.client();
    const charged = (await client.callTool({
      name: "charge_card",
      arguments: { order_id: "ord-ok-1", amount_cents: 100, card_token: "tok_1" },
    })) as any;
    expect(charged.isError).toBeFalsy();
    const fromInspector = new Client({ name: "inspector", version: "1.0.0" });
    await fromInspector.connect(
      new StreamableHTTPClientTransport(new URL(`http://localhost:${port}/`), {
        requestInit: { headers: { origin: "http://localhost:6274" } },
      }),
    );
    expect((await fromInspector.listTools()).tools.length).toBeGreaterThan(0);
    await fromInspector.close();
    expect(charges().map((c) => c.detail.order_id)).toEqual(["ord-ok-1"]);
  });
});

describe("the HTTP gateway's bearer token (SETTLE_MCP_TOKEN)", () => {
  let settle: SettleUnderTest;
  let s: Scratch;
  let upstream: Server;
  let seen: IncomingHttpHeaders[];
  let http: HttpSession;

  beforeAll(async () => {
    settle = await startSettle("postgres");
    s = scratch();
    seen = [];
    // A server that notes what reaches it: the token must not.
    upstream = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on("end", () =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} })),
      );
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    http = await startHttpSession(
      settle,
      s,
      `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`,
      undefined,
      { token: "gateway-secret-token" },
    );
  });
  afterAll(async () => {
    await http?.close();
    await new Promise((r) => upstream?.close(r));
    await settle?.close();
  });

  it("refuses a request without it (401), passes one with it, and keeps it from the server", async () => {
    const port = http.gateway.port;
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const base = { host: `127.0.0.1:${port}`, "content-type": "application/json" };
    const refused = await rawPost(port, base, ping);
    expect(refused.status).toBe(401);
    expect(refused.headers["www-authenticate"]).toMatch(/Bearer/);
    expect((await rawPost(port, { ...base, authorization: "Bearer wrong" }, ping)).status).toBe(401);
    expect(seen).toHaveLength(0);

    expect((await rawPost(port, { ...base, authorization: "Bearer gateway-secret-token" }, ping)).status).toBe(200);
    expect(seen.at(-1)?.authorization).toBeUndefined();
    // In its own header, the token leaves Authorization to the server's own credentials.
    expect(
      (
        await rawPost(
          port,
          { ...base, "settle-mcp-token": "gateway-secret-token", authorization: "Bearer server-credential" },
          ping,
        )
      ).status,
    ).toBe(200);
    expect(seen.at(-1)?.authorization).toBe("Bearer server-credential");
    expect(seen.at(-1)?.["settle-mcp-token"]).toBeUndefined();
  });
});
