import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { accessFor, checkExposure, checkRequest, isLoopback } from "../src/http-access.js";

// The HTTP gateway's door: a page in a browser can reach 127.0.0.1, so the
// Host must name this gateway (DNS rebinding), a browser Origin must be one
// allowed, a POST must be JSON (a text/plain POST needs no preflight), and
// the bearer token, when set, must come with every request.

const req = (headers: Record<string, string>, method = "POST") =>
  ({
    method,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
  }) as unknown as IncomingMessage;
const local = accessFor({ host: "127.0.0.1", port: 7070 }, { hosts: [], origins: [] }, null);
const json = { "content-type": "application/json" };
const status = (r: ReturnType<typeof checkRequest>) => ("refusal" in r ? r.refusal.status : 200);

describe("the HTTP gateway's access rules", () => {
  it("answers the loopback names at its own port only", () => {
    for (const host of ["127.0.0.1:7070", "localhost:7070", "[::1]:7070", "LOCALHOST:7070"])
      expect(status(checkRequest(req({ host, ...json }), local))).toBe(200);
    for (const host of [
      "evil.example",
      "evil.example:7070",
      "127.0.0.1:8080",
      "127.0.0.1",
      "localhost.evil.example:7070",
      "",
    ])
      expect(status(checkRequest(req({ host, ...json }), local))).toBe(403);
  });

  it("answers a configured name at its port, and a name without a port only at the scheme's default one (a TLS proxy's :443)", () => {
    const named = accessFor(
      { host: "0.0.0.0", port: 7070 },
      { hosts: ["mcp.internal", "mcp.example:443"], origins: [] },
      null,
    );
    for (const host of ["mcp.internal:7070", "mcp.example", "mcp.example:443"])
      expect(status(checkRequest(req({ host, ...json }), named))).toBe(200);
    for (const host of ["mcp.internal", "mcp.internal:443", "mcp.example:7070", "mcp.example:80"])
      expect(status(checkRequest(req({ host, ...json }), named))).toBe(403);
  });

  it("refuses every browser Origin unless allowed, the opaque null origin included", () => {
    expect(status(checkRequest(req({ host: "127.0.0.1:7070", origin: "http://evil.example", ...json }), local))).toBe(
      403,
    );
    expect(status(checkRequest(req({ host: "127.0.0.1:7070", origin: "http://localhost:7071", ...json }), local))).toBe(
      403,
    );
    expect(status(checkRequest(req({ host: "127.0.0.1:7070", origin: "null", ...json }), local))).toBe(403);
    const inspector = accessFor(
      { host: "127.0.0.1", port: 7070 },
      { hosts: [], origins: ["http://localhost:6274"] },
      null,
    );
    expect(
      status(checkRequest(req({ host: "127.0.0.1:7070", origin: "http://localhost:6274", ...json }), inspector)),
    ).toBe(200);
    expect(
      status(checkRequest(req({ host: "127.0.0.1:7070", origin: "http://localhost:6275", ...json }), inspector)),
    ).toBe(403);
  });

  it("refuses a POST that is not application/json (415); a GET has no body to judge", () => {
    expect(status(checkRequest(req({ host: "127.0.0.1:7070", "content-type": "text/plain" }), local))).toBe(415);
    expect(status(checkRequest(req({ host: "127.0.0.1:7070" }), local))).toBe(415);
    expect(
      status(checkRequest(req({ host: "127.0.0.1:7070", "content-type": "application/json; charset=utf-8" }), local)),
    ).toBe(200);
    expect(status(checkRequest(req({ host: "127.0.0.1:7070" }, "GET"), local))).toBe(200);
  });

  it("with a token: 401 without it, through with it in Authorization or Settle-Mcp-Token", () => {
    const guarded = accessFor(
      { host: "0.0.0.0", port: 7070 },
      { hosts: ["mcp.internal"], origins: [] },
      "s3cret-token",
    );
    const r = (extra: Record<string, string>) =>
      checkRequest(req({ host: "mcp.internal:7070", ...json, ...extra }), guarded);
    expect(status(r({}))).toBe(401);
    expect(status(r({ authorization: "Bearer wrong" }))).toBe(401);
    expect(r({ authorization: "Bearer s3cret-token" })).toEqual({ carrier: "authorization" });
    expect(r({ "settle-mcp-token": "s3cret-token", authorization: "Bearer for-the-server" })).toEqual({
      carrier: "settle-mcp-token",
    });
    expect(
      status(checkRequest(req({ host: "evil.example:7070", ...json, authorization: "Bearer s3cret-token" }), guarded)),
    ).toBe(403);
  });

  it("listens beyond loopback only with a token", () => {
    expect(isLoopback("127.0.0.1") && isLoopback("::1") && isLoopback("localhost")).toBe(true);
    expect(isLoopback("0.0.0.0") || isLoopback("192.168.1.5") || isLoopback("::")).toBe(false);
    expect(() => checkExposure("127.0.0.1", null)).not.toThrow();
    expect(() => checkExposure("0.0.0.0", null)).toThrow(/SETTLE_MCP_TOKEN/);
    expect(() => checkExposure("0.0.0.0", "t")).not.toThrow();
  });
});
