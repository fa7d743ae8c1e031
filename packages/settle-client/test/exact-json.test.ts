import { describe, expect, it } from "vitest";
import { parseExactJson, stringifyExactJson } from "../src/exact-json.js";
import { canonicalJson } from "../src/index.js";

// The client's exact JSON (Settle's decision 039): an integer past 2^53 is a bigint with its digits, read and written.
// Settle's integration tests check it against the app's lib/json on random text.

describe("exact JSON in the client", () => {
  it("reads an integer JSON.parse would round as a bigint, and every other number as JSON.parse does", () => {
    const text =
      '{"order":12345678901234567891,"n":[-18446744073709551617,9007199254740991,1.5e300,0.5],"s":"12345678901234567891"}';
    expect(parseExactJson(text)).toEqual({
      order: 12345678901234567891n,
      n: [-18446744073709551617n, 9007199254740991, 1.5e300, 0.5],
      s: "12345678901234567891",
    });
    expect(JSON.parse(text).order).toBe(12345678901234567000);
  });

  it("reads an integer of more than 100 digits as JSON.parse does", () => {
    const long = `[${"9".repeat(101)}]`;
    expect(parseExactJson(long)).toEqual(JSON.parse(long));
  });

  it("writes a bigint as its digits, and anything else as JSON.stringify does", () => {
    expect(stringifyExactJson({ order: 12345678901234567891n, a: [1, "x", null] })).toBe(
      '{"order":12345678901234567891,"a":[1,"x",null]}',
    );
    const plain = { a: [1, { b: "2" }], c: undefined };
    expect(stringifyExactJson(plain)).toBe(JSON.stringify(plain));
  });

  it("canonical JSON (the default idempotency key) writes a bigint as its digits", () => {
    expect(canonicalJson({ z: 1, order: 12345678901234567891n })).toBe('{"order":12345678901234567891,"z":1}');
  });
});
