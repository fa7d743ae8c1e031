import { describe, expect, it } from "vitest";
import { cleanText, MAX_DEPTH, REDACTED, redact, TooDeepError } from "./redact";

describe("redaction", () => {
  it.each([
    ["token", "t0k"],
    ["access_token", "t0k"],
    ["client_secret", "s"],
    ["password", "hunter2"],
    ["Authorization", "Bearer abc"],
    ["api_key", "sk-1"],
    ["x-api-key", "sk-1"],
    ["apiKey", "sk-1"],
    ["cookie", "sid=1"],
    ["Set-Cookie", "sid=1"],
    ["credentials", { user: "a" }],
    ["private_key", "-----BEGIN"],
    ["session_id", "abc"],
  ])("replaces the value under %s", (key, value) => {
    expect(redact({ [key]: value })).toEqual({ [key]: REDACTED });
  });

  it("keeps ordinary keys, walks nested objects and arrays, and leaves the input untouched", () => {
    const input = { field: "amount", nested: [{ password: "p", keep: 1 }], deeper: { a: { secret: "s", b: [true, null] } } };
    const out = redact(input);
    expect(out).toEqual({ field: "amount", nested: [{ password: REDACTED, keep: 1 }], deeper: { a: { secret: REDACTED, b: [true, null] } } });
    expect(input.nested[0]!.password).toBe("p");
  });

  it("redacts bearer credentials wherever they appear as a value", () => {
    expect(redact({ header: "Bearer eyJhbGciOi", note: "the bearer of bad news" })).toEqual({ header: REDACTED, note: "the bearer of bad news" });
  });

  it("keeps empty and null secrets as they are, so their absence stays visible", () => {
    expect(redact({ token: null, password: "" })).toEqual({ token: null, password: "" });
  });

  it("replaces NUL and lone surrogates, which PostgreSQL cannot store", () => {
    expect(cleanText("a\u0000b")).toBe("a\uFFFDb");
    expect(cleanText("x\uD800y")).toBe("x\uFFFDy");
    expect(redact({ "k\u0000": "v\u0000" })).toEqual({ "k\uFFFD": "v\uFFFD" });
  });

  it("refuses nesting deeper than the limit", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < MAX_DEPTH + 2; i += 1) deep = [deep];
    expect(() => redact(deep)).toThrow(TooDeepError);
  });
});
