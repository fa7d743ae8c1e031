import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { argsDigest, canonicalJson } from "./args-digest";
import { parseExactJson } from "../json/exact";
import { digestArguments } from "../../packages/settle-mcp-gateway/src/identity";

// The one arguments digest (decision 028): canonical JSON without the volatile arguments, SHA-256.

const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("argsDigest", () => {
  it("is the SHA-256 of the canonical JSON: keys sorted at every level, no spaces", () => {
    expect(canonicalJson({ b: [2, { d: 1, c: "é" }], a: null })).toBe('{"a":null,"b":[2,{"c":"é","d":1}]}');
    expect(argsDigest({ b: 1, a: { y: 2, x: [1, "two"] } })).toBe(sha('{"a":{"x":[1,"two"],"y":2},"b":1}'));
  });

  it.each([
    ["key order", { amount: 50, charge: "ch_1" }, { charge: "ch_1", amount: 50 }, true],
    [
      "a new idempotency key, nonce, request id or timestamp",
      { amount: 50, idempotency_key: "k1", nonce: "a" },
      { amount: 50, idempotency_key: "k2", request_id: "r", timestamp: "t" },
      true,
    ],
    ["another amount", { amount: 50 }, { amount: 51 }, false],
    ["a number and its text", { amount: 50 }, { amount: "50" }, false],
    [
      "a nested volatile name (only top-level names are volatile)",
      { meta: { nonce: 1 } },
      { meta: { nonce: 2 } },
      false,
    ],
  ])("%s", (_what, a, b, same) => {
    expect(argsDigest(a) === argsDigest(b)).toBe(same);
  });

  it("leaves out the names it is given instead of the default list", () => {
    expect(argsDigest({ amount: 1, memo: "a" }, ["memo"])).toBe(argsDigest({ amount: 1, memo: "b" }, ["memo"]));
    expect(argsDigest({ amount: 1, nonce: "a" }, ["memo"])).not.toBe(argsDigest({ amount: 1, nonce: "b" }, ["memo"]));
    expect(argsDigest({ amount: 1, nonce: "a" }, [])).toBe(sha('{"amount":1,"nonce":"a"}'));
  });

  it("digests arguments that are not an object whole (a span may carry text), and keeps __proto__ as data", () => {
    expect(argsDigest("book TP1")).toBe(sha('"book TP1"'));
    expect(argsDigest([1, 2])).toBe(sha("[1,2]"));
    const withProto = JSON.parse('{"__proto__": {"x": 1}, "a": 1}') as Record<string, unknown>;
    expect(argsDigest(withProto)).toBe(sha('{"__proto__":{"x":1},"a":1}'));
  });

  it("digests an integer past 2^53 by its digits, as sent (decision 039)", () => {
    const text = '{"order": 12345678901234567890, "lines": [{"sku": -18446744073709551617}], "n": 1}';
    expect(argsDigest(parseExactJson(text))).toBe(
      sha('{"lines":[{"sku":-18446744073709551617}],"n":1,"order":12345678901234567890}'),
    );
    expect(argsDigest(parseExactJson(text))).not.toBe(argsDigest(parseExactJson(text.replace("890", "000"))));
  });

  it("is the digest Python's json.dumps gives the same arguments (an int keeps its digits there too)", () => {
    const text = '{"order": 12345678901234567890, "b": [-99999999999999999999, 7, "x"], "a": {"z": 9007199254740993}}';
    const python = execFileSync(
      "python3",
      [
        "-c",
        "import hashlib, json, sys; v = json.loads(sys.argv[1]); " +
          "print('sha256:' + hashlib.sha256(json.dumps(v, sort_keys=True, separators=(',', ':')).encode()).hexdigest())",
        text,
      ],
      { encoding: "utf8" },
    ).trim();
    expect(argsDigest(parseExactJson(text))).toBe(python);
  });

  it("is the MCP gateway's digest of a call its SDK parsed (rounded before it sees it) and sent on", () => {
    const text = '{"order": 12345678901234567890, "amount": 1200}';
    const asTheGatewayHoldsIt = JSON.parse(text) as unknown;
    const asSettleReadsWhatItSends = parseExactJson(JSON.stringify(asTheGatewayHoldsIt));
    expect(digestArguments(asTheGatewayHoldsIt)).toBe(argsDigest(asSettleReadsWhatItSends, []));
  });
});
