import { describe, expect, it } from "vitest";
import { resolveClientIp, trustedProxyList } from "./client-ip";

const none = trustedProxyList([]);
const proxies = trustedProxyList(["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"]);

describe("resolveClientIp", () => {
  it.each([
    ["no trusted proxies: the socket, whatever the header says", "203.0.113.9", "1.2.3.4", none, "203.0.113.9"],
    [
      "no trusted proxies: a spoofed header from a client is ignored",
      "203.0.113.9",
      "127.0.0.1, 10.0.0.1",
      none,
      "203.0.113.9",
    ],
    [
      "an untrusted socket's header is ignored even with proxies configured",
      "203.0.113.9",
      "1.2.3.4",
      proxies,
      "203.0.113.9",
    ],
    ["a trusted proxy: the address it appended", "10.1.2.3", "198.51.100.4", proxies, "198.51.100.4"],
    [
      "a client's own prefix before the proxy's entry is not believed",
      "10.1.2.3",
      "6.6.6.6, 198.51.100.4",
      proxies,
      "198.51.100.4",
    ],
    [
      "two trusted hops: the first untrusted from the right",
      "10.1.2.3",
      "6.6.6.6, 198.51.100.4, 10.9.9.9",
      proxies,
      "198.51.100.4",
    ],
    ["a single trusted address", "192.0.2.7", "198.51.100.5", proxies, "198.51.100.5"],
    ["IPv6 proxy", "2001:db8::1", "2001:db8::2, 2a00:1450::1", proxies, "2a00:1450::1"],
    ["IPv4-mapped socket", "::ffff:203.0.113.9", null, none, "203.0.113.9"],
    ["a trusted proxy with no header: the proxy itself", "10.1.2.3", null, proxies, "10.1.2.3"],
    [
      "garbage in the chain stops the walk at the last good hop",
      "10.1.2.3",
      "x-not-an-ip, 10.2.2.2",
      proxies,
      "10.2.2.2",
    ],
    ["every hop trusted: the leftmost", "10.1.2.3", "10.5.5.5, 10.6.6.6", proxies, "10.5.5.5"],
    ["bracketed IPv6 in the header", "10.1.2.3", "[2a00:1450::9]", proxies, "2a00:1450::9"],
  ])("%s", (_name, socket, header, list, expected) => {
    expect(resolveClientIp(socket, header, list)).toBe(expected);
  });

  it("an unknown or malformed socket address is unknown (null), never a header's claim", () => {
    expect(resolveClientIp(null, "1.2.3.4", proxies)).toBeNull();
    expect(resolveClientIp("", "1.2.3.4", proxies)).toBeNull();
    expect(resolveClientIp("nonsense", "1.2.3.4", proxies)).toBeNull();
  });
});
