import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isJsonContentType, validateHostHeader, validateOriginHeader } from "@modelcontextprotocol/server";

// Who may use the HTTP gateway (decision 026). A page in a browser can reach
// a server on 127.0.0.1 (DNS rebinding: a name of the attacker's resolving to
// it; or a plain cross-site POST of text/plain, which needs no preflight), so
// before anything is read or forwarded a request must name this gateway in
// its Host (the loopback names at the port it listens on, or the hosts
// configured), come from no browser origin or an allowed one, be JSON when it
// is a POST, and carry the bearer token when one is set. Listening on
// anything but loopback requires the token. The SDK's own helpers parse Host
// and Origin; they match hostnames only, so the port is checked here.

export type HttpAccess = {
  /** `host:port`, lowercase, IPv6 in brackets. */
  hosts: string[];
  /** Origins (`scheme://host[:port]`) a browser page may call from. */
  origins: string[];
  token: string | null;
};

export class ExposureError extends Error {}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

const bracketed = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host).toLowerCase();

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return (
    h === "localhost" ||
    h === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
  );
}

const isWildcard = (host: string) => ["0.0.0.0", "::", "[::]"].includes(host.toLowerCase());

/** Refuses to expose the gateway beyond this machine without a token: anyone on the network could call every tool. */
export function checkExposure(listenHost: string, token: string | null): void {
  if (isLoopback(listenHost) || token) return;
  throw new ExposureError(
    `--host ${listenHost} serves the gateway to the network, where anyone who reaches it could call the server's tools: set SETTLE_MCP_TOKEN to a secret bearer token that clients must send (Authorization: Bearer …), or listen on 127.0.0.1`,
  );
}

/** A configured host without a port means the port the gateway listens on. */
function hostEntry(entry: string, port: number): string {
  const trimmed = entry.trim().toLowerCase();
  try {
    const url = new URL(`http://${trimmed}`);
    return `${url.hostname}:${url.port || (/:\d+$/.test(trimmed) ? "80" : String(port))}`;
  } catch {
    return trimmed;
  }
}

function originEntry(entry: string): string {
  try {
    return new URL(entry.trim()).origin.toLowerCase();
  } catch {
    return entry.trim().toLowerCase();
  }
}

export function accessFor(
  listen: { host: string; port: number },
  configured: { hosts: string[]; origins: string[] },
  token: string | null,
): HttpAccess {
  const names = new Set(LOOPBACK_NAMES);
  if (!isWildcard(listen.host)) names.add(bracketed(listen.host));
  return {
    hosts: [
      ...new Set([
        ...[...names].map((n) => `${n}:${listen.port}`),
        ...configured.hosts.map((h) => hostEntry(h, listen.port)),
      ]),
    ],
    origins: configured.origins.map(originEntry),
    token: token && token.length > 0 ? token : null,
  };
}

/**
 * A Host without a port names the client's default port: 80 over plain HTTP,
 * 443 through a TLS proxy that passes the Host on, which is the one way the
 * gateway is reached at a name without its own port.
 */
function hostAllowed(hostHeader: string, access: HttpAccess): boolean {
  const given = hostEntry(hostHeader, 80);
  if (access.hosts.includes(given)) return true;
  const portless = !/:\d+$/.test(hostHeader.trim());
  return portless && access.hosts.includes(`${given.slice(0, given.lastIndexOf(":"))}:443`);
}

export type AccessRefusal = { status: number; message: string; headers?: Record<string, string> };

const digest = (text: string) => createHash("sha256").update(text).digest();
const sameSecret = (given: string, token: string) => timingSafeEqual(digest(given), digest(token));

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Which header carried the gateway's token, so that it is not passed on to the server. */
export type TokenCarrier = "authorization" | "settle-mcp-token" | null;

/** Null when the request may go on; otherwise the answer that refuses it. */
export function checkRequest(
  req: IncomingMessage,
  access: HttpAccess,
): { refusal: AccessRefusal } | { carrier: TokenCarrier } {
  const hostHeader = header(req, "host");
  const allowedNames = [...new Set(access.hosts.map((h) => h.slice(0, h.lastIndexOf(":"))))];
  const host = validateHostHeader(hostHeader, allowedNames);
  if (!host.ok)
    return {
      refusal: {
        status: 403,
        message: `${host.message}: this gateway answers to ${access.hosts.join(", ")} (allow more with --allow-host)`,
      },
    };
  if (!hostAllowed(hostHeader!, access))
    return {
      refusal: {
        status: 403,
        message: `Invalid Host: ${hostHeader}: this gateway answers to ${access.hosts.join(", ")}`,
      },
    };

  const originHeader = header(req, "origin");
  if (originHeader !== undefined && originHeader !== "") {
    const parsed = validateOriginHeader(originHeader, allowedOriginNames(access));
    if (!parsed.ok || !access.origins.includes(originEntry(originHeader))) {
      return {
        refusal: {
          status: 403,
          message: `Origin ${originHeader} is not allowed to call this gateway (allow it with --allow-origin)`,
        },
      };
    }
  }

  let carrier: TokenCarrier = null;
  if (access.token) {
    const own = header(req, "settle-mcp-token");
    const bearer = /^Bearer\s+(.+)$/i.exec(header(req, "authorization") ?? "")?.[1]?.trim();
    if (own !== undefined && sameSecret(own, access.token)) carrier = "settle-mcp-token";
    else if (bearer !== undefined && sameSecret(bearer, access.token)) carrier = "authorization";
    else
      return {
        refusal: {
          status: 401,
          message: "This gateway needs its bearer token (SETTLE_MCP_TOKEN): Authorization: Bearer <token>",
          headers: { "www-authenticate": 'Bearer realm="settle-mcp"' },
        },
      };
  }

  if (req.method === "POST" && !isJsonContentType(header(req, "content-type") ?? null)) {
    return { refusal: { status: 415, message: "A POST to this gateway must be Content-Type: application/json" } };
  }
  return { carrier };
}

function allowedOriginNames(access: HttpAccess): string[] {
  const names: string[] = [];
  for (const origin of access.origins) {
    try {
      names.push(new URL(origin).hostname);
    } catch {
      // not an origin: matches nothing
    }
  }
  return names;
}
