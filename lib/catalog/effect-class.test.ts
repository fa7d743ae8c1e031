import { describe, expect, it } from "vitest";
import { effectClassFor, patternMatches } from "./effect-class";

describe("effectClassFor", () => {
  const catalog = [
    { pattern: "get_*", effect_class: "read" as const },
    { pattern: "refund_payment", effect_class: "money" as const },
    { pattern: "*", effect_class: "send" as const },
  ];
  it.each([
    ["get_weather", null, "read"],
    ["refund_payment", "datastore", "money"],
    ["anything", null, "send"],
  ])("the first matching entry decides: %s", (tool, type, expected) => expect(effectClassFor(catalog, tool, type)).toBe(expected));

  it("without an entry, a datastore tool is a read and anything else is unclassified (a write)", () => {
    expect(effectClassFor([], "search", "datastore")).toBe("read");
    expect(effectClassFor([], "search", "function")).toBeNull();
    expect(effectClassFor([], "search")).toBeNull();
  });

  it("patterns match whole names; only * is special", () => {
    expect(patternMatches("get_*", "get_")).toBe(true);
    expect(patternMatches("get_*", "forget_x")).toBe(false);
    expect(patternMatches("a.b", "axb")).toBe(false);
    expect(patternMatches("*_order", "create_order")).toBe(true);
    expect(patternMatches("send", "send_email")).toBe(false);
  });
});
