import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchesPattern as serverMatches } from "@/lib/catalog/effect-class";
import { parseConfig } from "../src/config.js";
import { catalogEffectFor, matchesPattern, ruleFor } from "../src/effects.js";

// The gateway is published alone, so it carries a copy of Settle's tool
// catalog matcher (lib/catalog/effect-class.ts) instead of importing it: the
// copy must answer as the server does for every pattern and name, and stay
// linear, where a pattern turned into a regular expression backtracked for
// seconds on a long name.

// Few letters and many stars make the agreements and near-misses a random name would almost never hit.
const alphabet = fc.constantFrom("a", "b", ".", "_", "*", "\n", "é");
const text = (max: number) => fc.array(alphabet, { maxLength: max }).map((cs) => cs.join(""));
const name = (max: number) => text(max).map((s) => s.replaceAll("*", "x"));

describe("the gateway's pattern matcher", () => {
  it("agrees with Settle's matcher on generated patterns and names", () => {
    fc.assert(
      fc.property(text(12), name(24), (pattern, tool) => {
        expect(matchesPattern(pattern, tool)).toBe(serverMatches(pattern, tool));
      }),
      { numRuns: 5000 },
    );
  });

  it("agrees on names built from the pattern itself (the matching cases)", () => {
    fc.assert(
      fc.property(text(10), fc.array(name(6), { minLength: 10, maxLength: 10 }), (pattern, fills) => {
        let i = 0;
        const tool = pattern.replace(/\*/g, () => fills[i++ % fills.length]!);
        expect(serverMatches(pattern, tool)).toBe(true);
        expect(matchesPattern(pattern, tool)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("reads * as any characters, a line break included, and nothing else as special", () => {
    expect(matchesPattern("a*b", "a\nb")).toBe(true);
    expect(matchesPattern("get.order", "get_order")).toBe(false);
    expect(matchesPattern("charge_(card)", "charge_(card)")).toBe(true);
  });

  it("answers a many-star pattern against a long name that almost matches at once (no backtracking blow-up)", () => {
    const pattern = "*.*.*.*.*.*.*.*.create";
    const tool = ".".repeat(199);
    // A regular expression ^.*\..*\. … create$ tries every way to place eight dots: this would not return for hours.
    expect(matchesPattern(pattern, tool)).toBe(false);
    expect(catalogEffectFor([{ pattern, effect_class: "money" }], tool)).toBeNull();
    expect(ruleFor(parseConfig({ tools: [{ match: pattern, effect: "money" }] }, "t"), tool)).toBeNull();
  });
});
