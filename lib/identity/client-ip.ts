import { BlockList, isIP } from "node:net";
import { env } from "../env";
import { processWide } from "../process-wide";

// Who is on the other end of a request. The address of the TCP peer is the
// only fact; X-Forwarded-For is a claim anyone can send, believed only hop by
// hop from the right while each hop is a proxy the operator listed in
// SETTLE_TRUSTED_PROXIES. See docs/decisions/013-client-address.md.

/** Set by server.mjs on every request, from the socket, overwriting anything a client sent. */
export const SOCKET_ADDRESS_HEADER = "x-settle-socket-address";
/** What Better Auth reads (its ipAddressHeaders): the address computed here, never a client's header. */
export const CLIENT_ADDRESS_HEADER = "x-settle-client-ip";

/** True when this process was started by server.mjs (which sets `serverScript`), so SOCKET_ADDRESS_HEADER is the server's and not a client's. */
export function socketAddressIsTrusted(): boolean {
  return processWide("serverScript", () => false) === true;
}

function plain(address: string): string {
  const trimmed = address.trim().replace(/^\[|\]$/g, "");
  // ::ffff:203.0.113.9 is an IPv4 client on a dual-stack socket.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(trimmed);
  return mapped ? mapped[1]! : trimmed;
}

export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split("/");
    const family = isIP(address!) === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(address!, family);
    else list.addSubnet(address!, Number(bits), family);
  }
  return list;
}

function isTrusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? "ipv6" : "ipv4");
}

/**
 * The client's address: the socket's, unless the socket is a trusted proxy;
 * then X-Forwarded-For is walked from the right, past every trusted hop, and
 * the first address not trusted is the client. null when the socket address
 * is unknown (a server not started through server.mjs, e.g. `next dev`).
 */
export function resolveClientIp(
  socketAddress: string | null,
  forwardedFor: string | null,
  trusted: BlockList,
): string | null {
  if (!socketAddress || !isIP(plain(socketAddress))) return null;
  let client = plain(socketAddress);
  if (!isTrusted(trusted, client) || !forwardedFor) return client;
  const hops = forwardedFor.split(",").map(plain).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i]!;
    // A hop that is no address is where the claims stop making sense: the last good one is the client.
    if (!isIP(hop)) return client;
    client = hop;
    if (!isTrusted(trusted, hop)) return hop;
  }
  return client;
}

const trustedLists = () =>
  processWide("trustedProxies", () => ({
    last: undefined as { entries: readonly string[]; list: BlockList } | undefined,
  }));

/** The client address of a request as this deployment's settings say to read it. */
export function clientIpOf(headers: Headers): string | null {
  if (!socketAddressIsTrusted()) return null;
  const entries = env().SETTLE_TRUSTED_PROXIES;
  const cache = trustedLists();
  if (cache.last?.entries !== entries) cache.last = { entries, list: trustedProxyList(entries) };
  return resolveClientIp(headers.get(SOCKET_ADDRESS_HEADER), headers.get("x-forwarded-for"), cache.last.list);
}
