import { describe, expect, it } from "vitest";
import {
  checkUrlShape,
  checkWebhookUrl,
  classifyAddress,
  isLocalName,
  isPublicAddress,
  type LookupFn,
} from "./safe-url";

// Every special-purpose range Settle refuses, by family, at both of its ends
// where that matters, and the spellings that reach them in disguise.

const refused: Array<[address: string, rule: string]> = [
  // IPv4
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "shared (CGNAT)"],
  ["100.127.255.255", "shared (CGNAT)"],
  ["169.254.169.254", "link-local"],
  ["169.254.0.1", "link-local"],
  ["192.0.0.8", "IETF protocol assignment"],
  ["192.0.2.10", "documentation"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.99", "documentation"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.254", "reserved"],
  ["255.255.255.255", "broadcast"],
  // IPv6
  ["::1", "loopback"],
  ["::", "unspecified"],
  ["fe80::1", "link-local"],
  ["febf:ffff::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["fc00::1", "unique-local"],
  ["fd12:3456:789a::1", "unique-local"],
  ["ff02::1", "multicast"],
  ["ff05::1:3", "multicast"],
  ["2001:db8::1", "documentation"],
  ["3fff::1", "documentation"],
  ["2001:2::1", "benchmarking"],
  ["2002:7f00:1::1", "IPv6 transition"],
  ["2001:0:4136:e378::1", "IPv6 transition"],
  ["100::1", "reserved"],
  ["fec0::1", "reserved"],
  ["::127.0.0.1", "reserved"],
  // IPv4-mapped IPv6: the IPv4 rules apply to the address inside.
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.0.0.5", "private"],
  ["::ffff:169.254.169.254", "link-local"],
  ["::ffff:0.0.0.0", "unspecified"],
  ["[::1]", "loopback"],
  // IPv6 that a translator or tunnel delivers to a private or reserved IPv4 address: NAT64's well-known prefix,
  // SIIT's IPv4-translated form, ISATAP's interface identifier in any prefix.
  ["64:ff9b::a9fe:a9fe", "link-local"],
  ["64:ff9b::169.254.169.254", "link-local"],
  ["64:ff9b::7f00:1", "loopback"],
  ["64:ff9b::a00:1", "private"],
  ["64:ff9b::c0a8:101", "private"],
  ["64:ff9b::6440:1", "shared (CGNAT)"],
  ["64:ff9b::", "unspecified"],
  ["::ffff:0:a9fe:a9fe", "link-local"],
  ["::ffff:0:10.1.2.3", "private"],
  ["2a00:1450:4001:82b:0:5efe:a00:1", "private"],
  ["2a00:1450:4001:82b:200:5efe:7f00:1", "loopback"],
  // Not an address at all: never public.
  ["not-an-ip", "reserved"],
  ["", "reserved"],
];

const allowed = [
  "93.184.216.34",
  "8.8.8.8",
  "1.1.1.1",
  "172.15.255.255",
  "172.32.0.1",
  "100.63.255.255",
  "100.128.0.1",
  "192.0.1.1",
  "198.17.255.255",
  "198.20.0.1",
  "223.255.255.255",
  "2606:2800:220:1::1",
  "2a00:1450:4001:82b::200e",
  "::ffff:93.184.216.34",
  "2001:4860:4860::8888",
  // Translated to a public IPv4 address: as public as that address.
  "64:ff9b::808:808",
  "::ffff:0:93.184.216.34",
  "2a00:1450:4001:82b:0:5efe:808:808",
];

describe("classifyAddress", () => {
  it.each(refused)("refuses %s (%s)", (address, rule) => {
    expect(classifyAddress(address)).toBe(rule);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(allowed)("allows %s", (address) => {
    expect(classifyAddress(address)).toBeNull();
    expect(isPublicAddress(address)).toBe(true);
  });
});

const noDns: LookupFn = async () => {
  throw new Error("DNS must not be asked");
};
const answering =
  (answers: Record<string, string[]>): LookupFn =>
  async (host) => {
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

describe("checkWebhookUrl: literal addresses, in every spelling WHATWG URL parsing accepts", () => {
  const literals: Array<[url: string, rule: string, address: string]> = [
    ["http://127.0.0.1:9/x", "loopback", "127.0.0.1"],
    ["http://2130706433/", "loopback", "127.0.0.1"],
    ["http://0x7f.1/", "loopback", "127.0.0.1"],
    ["http://0x7f000001/", "loopback", "127.0.0.1"],
    ["http://017700000001/", "loopback", "127.0.0.1"],
    ["http://0177.0.0.1/", "loopback", "127.0.0.1"],
    ["http://127.1/", "loopback", "127.0.0.1"],
    ["http://0/", "unspecified", "0.0.0.0"],
    ["http://0.0.0.0:3000/", "unspecified", "0.0.0.0"],
    ["http://169.254.169.254/latest/meta-data", "link-local", "169.254.169.254"],
    ["http://10.0.0.1./", "private", "10.0.0.1"],
    ["https://[::1]/", "loopback", "::1"],
    ["http://[::]/", "unspecified", "::"],
    ["http://[::ffff:127.0.0.1]/", "loopback", "::ffff:7f00:1"],
    ["http://[0:0:0:0:0:ffff:a9fe:a9fe]/", "link-local", "::ffff:a9fe:a9fe"],
    ["http://[fe80::1]/", "link-local", "fe80::1"],
    ["http://[fd00::1]:8080/", "unique-local", "fd00::1"],
    ["http://[64:ff9b::a9fe:a9fe]/latest/meta-data", "link-local", "64:ff9b::a9fe:a9fe"],
    ["http://[64:ff9b::169.254.169.254]/", "link-local", "64:ff9b::a9fe:a9fe"],
    ["http://[::ffff:0:a9fe:a9fe]/", "link-local", "::ffff:0:a9fe:a9fe"],
  ];

  it.each(literals)("%s is refused as %s (%s), without DNS", async (url, rule, address) => {
    const check = await checkWebhookUrl(url, { allowPrivate: false, lookup: noDns });
    expect(check).toMatchObject({ ok: false, rule, address });
    if (!check.ok) expect(check.message).toContain("SETTLE_WEBHOOK_ALLOW_PRIVATE=1");
  });

  it.each(["http://93.184.216.34/hook", "https://[2606:2800:220:1::1]:8443/hook", "http://1572395042/"])(
    "%s is allowed",
    async (url) => {
      const check = await checkWebhookUrl(url, { allowPrivate: false, lookup: noDns });
      expect(check.ok).toBe(true);
    },
  );

  it("with SETTLE_WEBHOOK_ALLOW_PRIVATE every literal is allowed, and pinned as it is", async () => {
    for (const [url, , address] of literals) {
      const check = await checkWebhookUrl(url, { allowPrivate: true, lookup: noDns });
      expect(check, url).toMatchObject({ ok: true, addresses: [{ address }] });
    }
  });
});

describe("checkWebhookUrl: the URL's own rules (whatever SETTLE_WEBHOOK_ALLOW_PRIVATE says)", () => {
  const bad: Array<[url: string, rule: string]> = [
    ["ftp://example.com/hook", "scheme"],
    ["file:///etc/passwd", "scheme"],
    ["gopher://example.com/", "scheme"],
    ["javascript:alert(1)", "scheme"],
    ["data:text/plain,hi", "scheme"],
    ["ws://example.com/", "scheme"],
    ["http://user:pass@example.com/", "userinfo"],
    ["http://user@example.com/", "userinfo"],
    ["https://:secret@example.com/", "userinfo"],
    ["http://example.com@127.0.0.1/", "userinfo"],
    ["not a url", "not a URL"],
    ["http://", "not a URL"],
    ["", "not a URL"],
  ];
  it.each(bad)("%s is refused (%s)", async (url, rule) => {
    for (const allowPrivate of [false, true]) {
      expect(await checkWebhookUrl(url, { allowPrivate, lookup: noDns })).toMatchObject({ ok: false, rule });
    }
  });

  it("reads the host as WHATWG URL does", () => {
    expect(checkUrlShape("http://0x7f.1/")).toMatchObject({
      ok: true,
      host: "127.0.0.1",
      literal: { address: "127.0.0.1", family: 4 },
    });
    expect(checkUrlShape("https://[::1]:8443/")).toMatchObject({
      ok: true,
      host: "::1",
      literal: { address: "::1", family: 6 },
    });
    expect(checkUrlShape("https://Hooks.Example.COM/x")).toMatchObject({
      ok: true,
      host: "hooks.example.com",
      literal: null,
    });
  });
});

describe("checkWebhookUrl: host names", () => {
  it.each(["localhost", "LOCALHOST.", "api.localhost", "metadata.google.internal", "printer.local", "db.internal."])(
    "%s is refused without asking DNS",
    async (host) => {
      expect(isLocalName(host)).toBe(true);
      expect(await checkWebhookUrl(`http://${host}/hook`, { allowPrivate: false, lookup: noDns })).toMatchObject({
        ok: false,
        rule: "local name",
      });
    },
  );

  it("names that merely contain those words are resolved like any other", () => {
    expect(isLocalName("localhost.example.com")).toBe(false);
    expect(isLocalName("internal.example.com")).toBe(false);
    expect(isLocalName("mylocal")).toBe(false);
  });

  const lookup = answering({
    "hooks.example.com": ["93.184.216.34", "2606:2800:220:1::1"],
    "internal.example.com": ["10.0.0.5"],
    "mixed.example.com": ["93.184.216.34", "192.168.0.10"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "v6.example.com": ["fd00::5"],
    "empty.example.com": [],
  });

  it("allows a name whose every address is public, and gives all of them (the first is connected to)", async () => {
    const check = await checkWebhookUrl("https://hooks.example.com/settle", { allowPrivate: false, lookup });
    expect(check).toMatchObject({
      ok: true,
      host: "hooks.example.com",
      addresses: [
        { address: "93.184.216.34", family: 4 },
        { address: "2606:2800:220:1::1", family: 6 },
      ],
    });
  });

  it.each([
    ["internal.example.com", "private", "10.0.0.5"],
    ["mixed.example.com", "private", "192.168.0.10"],
    ["mapped.example.com", "loopback", "::ffff:127.0.0.1"],
    ["metadata.example.com", "link-local", "169.254.169.254"],
    ["v6.example.com", "unique-local", "fd00::5"],
  ])("refuses %s: one non-public address is enough (%s %s)", async (host, rule, address) => {
    const check = await checkWebhookUrl(`http://${host}/`, { allowPrivate: false, lookup });
    expect(check).toMatchObject({ ok: false, rule, address });
    if (!check.ok) expect(check.message).toContain(`${host} resolves to`);
  });

  it("refuses a name that does not resolve, or resolves to nothing, even when private targets are allowed", async () => {
    for (const allowPrivate of [false, true]) {
      expect(await checkWebhookUrl("http://nowhere.example.com/", { allowPrivate, lookup })).toMatchObject({
        ok: false,
        rule: "unresolvable",
      });
      expect(await checkWebhookUrl("http://empty.example.com/", { allowPrivate, lookup })).toMatchObject({
        ok: false,
        rule: "unresolvable",
      });
    }
  });

  it("with SETTLE_WEBHOOK_ALLOW_PRIVATE, private answers and local names are allowed", async () => {
    expect(await checkWebhookUrl("http://internal.example.com/", { allowPrivate: true, lookup })).toMatchObject({
      ok: true,
      addresses: [{ address: "10.0.0.5" }],
    });
    const local = await checkWebhookUrl("http://localhost:3000/", {
      allowPrivate: true,
      lookup: answering({ localhost: ["127.0.0.1"] }),
    });
    expect(local).toMatchObject({ ok: true, addresses: [{ address: "127.0.0.1" }] });
  });
});
