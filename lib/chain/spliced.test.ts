import { describe, expect, it } from "vitest";
import { isSpliceable, splicedContentSql } from "./spliced";

// The gate of the spliced content hash: a value passes only in the form format 1 prints its column in. Any other
// form PostgreSQL would still take (an upper-case uuid, a time with an offset, digits as a string) must fail it,
// so that its write is hashed column by column. tests/integration/chain-canonical.test.ts checks the bytes.

describe("isSpliceable", () => {
  it.each([
    ["uuid", "0b9e3c52-5f1e-4d3a-9c1b-2f0e6a7d8c90"],
    ["int", 0],
    ["int", -2147483648],
    ["int", 2147483647],
    ["text", ""],
    ["text", 'a "quoted" line\nwith ☃'],
    ["time", "2026-12-07T09:00:00.123Z"],
    ["time", "1000-01-01T00:00:00.000Z"],
    ["time", "9999-12-31T23:59:59.999Z"],
    ["jsonb", { any: ["value", 1e3, null] }],
    ["text", null],
    ["time", null],
  ] as const)("passes a %s in its printed form: %j", (form, value) => {
    expect(isSpliceable(form, value)).toBe(true);
  });

  it.each([
    ["uuid", "0B9E3C52-5F1E-4D3A-9C1B-2F0E6A7D8C90"],
    ["uuid", "0b9e3c525f1e4d3a9c1b2f0e6a7d8c90"],
    ["uuid", "{0b9e3c52-5f1e-4d3a-9c1b-2f0e6a7d8c90}"],
    ["int", "5"],
    ["int", 1.5],
    ["int", 2147483648],
    ["int", Number.NaN],
    ["text", 5],
    ["text", true],
    ["text", { a: 1 }],
    ["time", "2026-12-07T09:00:00Z"],
    ["time", "2026-12-07T09:00:00.123456Z"],
    ["time", "2026-12-07T10:00:00.123+01:00"],
    ["time", "2026-12-07 09:00:00.123Z"],
    ["time", "2026-02-30T00:00:00.000Z"],
    ["time", "2026-12-07T24:00:00.000Z"],
    ["time", "0999-12-31T23:59:59.999Z"],
    ["time", "+010000-01-01T00:00:00.000Z"],
    ["time", 1765098000000],
  ] as const)("refuses a %s in another form: %j", (form, value) => {
    expect(isSpliceable(form, value)).toBe(false);
  });
});

describe("splicedContentSql", () => {
  it("splices only a kind whose content runs from the runtime to a time, with no jsonb at the row's ends", () => {
    expect(splicedContentSql("attempt", "$1", "r", "now()")).toContain(`'["attempt", "'`);
    expect(splicedContentSql("transition", "$1", "r", "now()")).toContain(`'["transition", "'`);
    // An action's content begins with the runtime but ends with its payload (jsonb); an admin entry's has none.
    expect(() => splicedContentSql("action", "$1", "r", "now()")).toThrow(/cannot be spliced/);
    expect(() => splicedContentSql("admin", "$1", "r", "now()")).toThrow(/cannot be spliced/);
  });
});
