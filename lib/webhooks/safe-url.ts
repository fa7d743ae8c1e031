import { promises as dns } from "node:dns";
import { BlockList, isIP } from "node:net";

// Webhook URLs are chosen by an admin, but Settle is the one that connects:
// without these checks an endpoint could point at loopback, the cloud metadata
// service (169.254.169.254) or anything else on Settle's own network, and the
// delivery log would show what it answered. The ranges are the IANA special-
// purpose registries (IPv4 and IPv6) that are not globally reachable; the
// matching is node's BlockList, which also matches IPv4-mapped IPv6
// (::ffff:127.0.0.1) against the IPv4 rules.

export type AddressRule =
  | "loopback"
  | "unspecified"
  | "private"
  | "shared (CGNAT)"
  | "link-local"
  | "unique-local"
  | "multicast"
  | "broadcast"
  | "IETF protocol assignment"
  | "benchmarking"
  | "documentation"
  | "reserved"
  | "IPv6 transition";

type Range = readonly [rule: AddressRule, network: string, prefix: number];

// Order matters only for the rule named in a refusal: the more specific first.
const ranges: readonly Range[] = [
  ["broadcast", "255.255.255.255", 32],
  ["unspecified", "0.0.0.0", 8],
  ["loopback", "127.0.0.0", 8],
  ["private", "10.0.0.0", 8],
  ["private", "172.16.0.0", 12],
  ["private", "192.168.0.0", 16],
  ["shared (CGNAT)", "100.64.0.0", 10],
  ["link-local", "169.254.0.0", 16],
  ["documentation", "192.0.2.0", 24],
  ["IETF protocol assignment", "192.0.0.0", 24],
  ["IPv6 transition", "192.88.99.0", 24],
  ["benchmarking", "198.18.0.0", 15],
  ["documentation", "198.51.100.0", 24],
  ["documentation", "203.0.113.0", 24],
  ["multicast", "224.0.0.0", 4],
  ["reserved", "240.0.0.0", 4],
  ["unspecified", "::", 128],
  ["loopback", "::1", 128],
  // IPv4-compatible addresses (deprecated): ::a.b.c.d would reach a.b.c.d on some stacks.
  ["reserved", "::", 96],
  ["IPv6 transition", "64:ff9b:1::", 48],
  ["reserved", "100::", 64],
  ["benchmarking", "2001:2::", 48],
  ["IPv6 transition", "2001::", 32],
  ["IETF protocol assignment", "2001::", 23],
  ["documentation", "2001:db8::", 32],
  // 6to4 embeds an IPv4 address that may well be a private one.
  ["IPv6 transition", "2002::", 16],
  ["documentation", "3fff::", 20],
  ["unique-local", "fc00::", 7],
  ["link-local", "fe80::", 10],
  ["reserved", "fec0::", 10],
  ["multicast", "ff00::", 8],
];

/** "a loopback address", "an IETF protocol assignment address". */
export function describeRule(rule: AddressRule): string {
  return `${/^(unspecified|IETF|IPv6)/.test(rule) ? "an" : "a"} ${rule} address`;
}

const lists: ReadonlyArray<readonly [AddressRule, BlockList]> = ranges.map(([rule, network, prefix]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, isIP(network) === 4 ? "ipv4" : "ipv6");
  return [rule, list] as const;
});

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 read as two groups). */
function ipv6Groups(ip: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  let text = ip;
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${ip.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const part = (p: string | undefined) => (p ? p.split(":").map((g) => parseInt(g, 16)) : []);
  const front = part(head);
  const back = part(tail);
  return tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

// IPv6 addresses that carry an IPv4 address a translator or tunnel delivers to: NAT64's well-known prefix
// (64:ff9b::a9fe:a9fe is 169.254.169.254 behind a NAT64 gateway), SIIT's IPv4-translated addresses
// (::ffff:0:a.b.c.d) and ISATAP's interface identifiers (…:0:5efe:a.b.c.d, in any prefix). The IPv4-mapped
// (::ffff:a.b.c.d), IPv4-compatible, 6to4, Teredo and local-use NAT64 ranges are refused whole above.
const embedding: ReadonlyArray<readonly [string, number]> = [
  ["64:ff9b::", 96],
  ["::ffff:0:0:0", 96],
];
const embeddingLists = embedding.map(([network, prefix]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, "ipv6");
  return list;
});

/** The IPv4 address this IPv6 address is delivered to through a translator or tunnel, or null. */
export function embeddedIPv4(ip: string): string | null {
  const groups = ipv6Groups(ip);
  if (groups.length !== 8) return null;
  const isatap = (groups[4] === 0 || groups[4] === 0x200) && groups[5] === 0x5efe;
  if (!isatap && !embeddingLists.some((list) => list.check(ip, "ipv6"))) return null;
  const [hi, lo] = [groups[6]!, groups[7]!];
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

/** Which non-public range an address is in; null when it is public. Throws nothing: a non-address is "reserved". */
export function classifyAddress(address: string): AddressRule | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const ip = bare.split("%")[0]!;
  const family = isIP(ip);
  if (family === 0) return "reserved";
  const type = family === 4 ? "ipv4" : "ipv6";
  for (const [rule, list] of lists) if (list.check(ip, type)) return rule;
  // An address that maps to a private or reserved IPv4 address is that address, whatever wraps it.
  const inner = family === 6 ? embeddedIPv4(ip) : null;
  return inner === null ? null : classifyAddress(inner);
}

export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === null;
}

export type ResolvedAddress = { address: string; family: 4 | 6 };
export type LookupFn = (host: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

/** Every address the system resolver gives, in its order. */
export const systemLookup: LookupFn = (host) => dns.lookup(host, { all: true, verbatim: true });

export type UrlRefusal =
  | { rule: "not a URL" | "scheme" | "userinfo" | "no host" | "local name" | "unresolvable"; message: string }
  | { rule: AddressRule; address: string; message: string };

export type UrlCheck =
  { ok: true; url: URL; host: string; addresses: ResolvedAddress[] } | ({ ok: false } & UrlRefusal);

const localSuffixes = [".localhost", ".internal", ".local"];

/** Names that only mean something on this machine or its network: refused without asking DNS. */
export function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || localSuffixes.some((suffix) => name.endsWith(suffix));
}

type Shape = { ok: true; url: URL; host: string; literal: ResolvedAddress | null } | ({ ok: false } & UrlRefusal);

/** The URL's own rules, before any address: http(s), no user:pass@, a host. */
export function checkUrlShape(raw: string): Shape {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, rule: "not a URL", message: "is not a URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      rule: "scheme",
      message: `uses ${url.protocol.replace(/:$/, "")}: only http and https are allowed`,
    };
  }
  if (url.username !== "" || url.password !== "") {
    return {
      ok: false,
      rule: "userinfo",
      message: "contains a user name or password (user:pass@): Settle authenticates with Settle-Signature instead",
    };
  }
  // WHATWG parsing has already turned 2130706433, 0x7f.1 and 017700000001 into 127.0.0.1, so hostname is what gets connected to.
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (host === "") return { ok: false, rule: "no host", message: "has no host" };
  const family = isIP(host);
  return { ok: true, url, host, literal: family === 0 ? null : { address: host, family: family as 4 | 6 } };
}

export type CheckOptions = { allowPrivate: boolean; lookup?: LookupFn };

/**
 * Said with every refusal of a private target: the setting that counts is the sending server's, not that of
 * the shell (a CLI's, say) where the URL was added and checked.
 */
export const SERVER_PRIVATE_HINT =
  "the Settle server sends to private addresses only when it is started with SETTLE_WEBHOOK_ALLOW_PRIVATE=1 (development only)";

/**
 * Whether Settle may send to this URL, and where exactly: a literal address is
 * checked as it is, a name is resolved and every address it has must be public
 * (one private answer among public ones is enough for a rebinding attack).
 */
export async function checkWebhookUrl(raw: string, options: CheckOptions): Promise<UrlCheck> {
  const shape = checkUrlShape(raw);
  if (!shape.ok) return shape;
  const { url, host, literal } = shape;
  if (!options.allowPrivate && literal === null && isLocalName(host)) {
    return {
      ok: false,
      rule: "local name",
      message: `points at ${host}, a name local to Settle's own machine or network; ${SERVER_PRIVATE_HINT}`,
    };
  }
  let addresses: ResolvedAddress[];
  if (literal) {
    addresses = [literal];
  } else {
    const answers = await (options.lookup ?? systemLookup)(host).catch((error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      return typeof code === "string" ? code : "lookup failed";
    });
    if (typeof answers === "string" || answers.length === 0) {
      const why = typeof answers === "string" ? answers : "no addresses";
      return { ok: false, rule: "unresolvable", message: `has a host name, ${host}, that does not resolve (${why})` };
    }
    addresses = answers.map((a) => ({ address: a.address, family: isIP(a.address.split("%")[0]!) === 6 ? 6 : 4 }));
  }
  if (!options.allowPrivate) {
    for (const { address } of addresses) {
      const rule = classifyAddress(address);
      if (rule === null) continue;
      const via = literal ? "" : `${host} resolves to `;
      return {
        ok: false,
        rule,
        address,
        message: `points at ${via}${describeRule(rule)} (${address}); ${SERVER_PRIVATE_HINT}`,
      };
    }
  }
  return { ok: true, url, host, addresses };
}
