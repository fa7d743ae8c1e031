import { describe, expect, it } from "vitest";
import { effectClassFor, matchesPattern, sortBySpecificity, type ToolCatalogEntry } from "../effect-class";

// The catalog's reading, as a table: which class a tool gets from a runtime's
// entries. The most specific entry wins whatever order they are listed in;
// with none, only a datastore tool is a read, and anything else is null (a
// write, docs/outcome-model.md §2).

const catalog: ToolCatalogEntry[] = [
  { pattern: "*", effect_class: "create" },
  { pattern: "get_*", effect_class: "read" },
  { pattern: "get_invoice_pdf", effect_class: "send" },
  { pattern: "charge_*", effect_class: "money" },
  { pattern: "*_delete", effect_class: "destructive" },
  { pattern: "stripe.*.create", effect_class: "money" },
  { pattern: "search", effect_class: "read" },
];

type Row = {
  name: string;
  entries?: ToolCatalogEntry[];
  tool: string;
  toolType?: string | null;
  expect: string | null;
};

const rows: Row[] = [
  { name: "an exact name beats every pattern that matches too", tool: "get_invoice_pdf", expect: "send" },
  { name: "a prefix pattern", tool: "get_order", expect: "read" },
  { name: "a suffix pattern", tool: "user_delete", expect: "destructive" },
  {
    name: "more literal characters win: get_invoice_* (12) over get_* (4)",
    entries: [
      { pattern: "get_*", effect_class: "read" },
      { pattern: "get_invoice_*", effect_class: "send" },
    ],
    tool: "get_invoice_list",
    expect: "send",
  },
  {
    name: "a tie (charge_* and *_delete: 7 literal characters, one star) goes to code-unit order: * before c",
    tool: "charge_delete",
    expect: "destructive",
  },
  { name: "* in the middle", tool: "stripe.charges.create", expect: "money" },
  { name: "the catch-all * takes what nothing else matches", tool: "post_message", expect: "create" },
  {
    name: "an exact name matches only itself",
    entries: [{ pattern: "search", effect_class: "read" }],
    tool: "search_orders",
    expect: null,
  },
  {
    name: "matching is case-sensitive",
    entries: [{ pattern: "get_*", effect_class: "read" }],
    tool: "GET_order",
    expect: null,
  },
  {
    name: "* matches nothing too",
    entries: [{ pattern: "get_*", effect_class: "read" }],
    tool: "get_",
    expect: "read",
  },
  {
    name: "regex characters in a pattern are literal",
    entries: [{ pattern: "a.b", effect_class: "read" }],
    tool: "axb",
    expect: null,
  },
  { name: "no entries, no type: null (a write)", entries: [], tool: "create_order", expect: null },
  {
    name: "no entry matches, datastore: read",
    entries: [{ pattern: "charge_*", effect_class: "money" }],
    tool: "lookup_customer",
    toolType: "datastore",
    expect: "read",
  },
  {
    name: "a catalog entry beats datastore",
    entries: [{ pattern: "lookup_*", effect_class: "destructive" }],
    tool: "lookup_customer",
    toolType: "datastore",
    expect: "destructive",
  },
  {
    name: "the catch-all beats datastore too (the catalog said something)",
    tool: "vector_search",
    toolType: "datastore",
    expect: "create",
  },
  { name: "another tool type is no read", entries: [], tool: "lookup_customer", toolType: "function", expect: null },
  { name: "a null tool type is no read", entries: [], tool: "lookup_customer", toolType: null, expect: null },
];

describe("effectClassFor", () => {
  for (const row of rows) {
    it(row.name, () => {
      expect(effectClassFor(row.entries ?? catalog, row.tool, row.toolType)).toBe(row.expect);
    });
  }

  it("gives the same answer for every order of the entries", () => {
    const reversed = [...catalog].reverse();
    for (const row of rows.filter((r) => !r.entries))
      expect(effectClassFor(reversed, row.tool, row.toolType)).toBe(row.expect);
  });
});

describe("sortBySpecificity", () => {
  it("lists names first, then patterns by literal characters, fewer stars, code units", () => {
    const sorted = sortBySpecificity([
      { pattern: "*" },
      { pattern: "a*b*c" },
      { pattern: "ab*c" },
      { pattern: "*_delete" },
      { pattern: "zz" },
      { pattern: "charge_*" },
      { pattern: "aa" },
    ]);
    expect(sorted.map((e) => e.pattern)).toEqual(["aa", "zz", "*_delete", "charge_*", "ab*c", "a*b*c", "*"]);
  });
});

describe("matchesPattern", () => {
  const cases: Array<[string, string, boolean]> = [
    ["*", "", true],
    ["**", "x", true],
    ["a*", "a", true],
    ["*a", "ba", true],
    ["*a", "ab", false],
    ["a*b*c", "aXbYc", true],
    ["a*b*c", "aXcYb", false],
    ["a*a*a", "aaaa", true],
    ["a*a*a", "aa", false],
    ["", "", true],
    ["", "a", false],
  ];
  for (const [pattern, tool, matches] of cases) {
    it(`${JSON.stringify(pattern)} ${matches ? "matches" : "does not match"} ${JSON.stringify(tool)}`, () => {
      expect(matchesPattern(pattern, tool)).toBe(matches);
    });
  }

  it("stays fast on a pattern of many stars against a long name that does not match", () => {
    const pattern = `${"a*".repeat(99)}b`;
    expect(pattern.length).toBe(199);
    expect(matchesPattern(pattern, "a".repeat(10_000))).toBe(false);
  });
});
