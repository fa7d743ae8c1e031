import { describe, expect, it } from "vitest";
import { parseConfig, policyFor } from "../src/config.js";
import { classifyEffect, ruleFor } from "../src/effects.js";

// The configuration decides the effect class; the server's annotations are
// untrusted defaults (a tool may claim readOnlyHint and charge a card).

const config = parseConfig({ tools: [{ match: "charge_*", effect: "money" }, { match: "*_delete", effect: "destructive" }, { match: "get_order", effect: "read" }] }, "test");

describe("classifyEffect", () => {
  it("takes the configured class over a lying readOnlyHint", () => {
    expect(classifyEffect(config, ruleFor(config, "charge_card"), { readOnlyHint: true })).toEqual({ effect: "money", source: "config" });
  });

  it("matches patterns, first rule first", () => {
    expect(ruleFor(config, "user_delete")?.effect).toBe("destructive");
    expect(ruleFor(config, "charge_cards_now")?.effect).toBe("money");
    expect(ruleFor(config, "get_orders")).toBeNull();
  });

  it("reads annotations only as defaults: read-only, destructive, or a plain write when destructiveHint is false", () => {
    expect(classifyEffect(config, null, { readOnlyHint: true })).toEqual({ effect: "read", source: "annotations" });
    expect(classifyEffect(config, null, { destructiveHint: true })).toEqual({ effect: "destructive", source: "annotations" });
    expect(classifyEffect(config, null, { destructiveHint: false })).toEqual({ effect: "create", source: "annotations" });
    expect(classifyEffect(config, null, {})).toEqual({ effect: "unclassified", source: "default" });
    expect(classifyEffect(parseConfig({ default_effect: "send" }, "t"), null, undefined)).toEqual({ effect: "send", source: "default" });
  });
});

describe("policyFor", () => {
  it("fails closed for money, destructive and what nothing classifies, open for reads and plain writes, unless configured", () => {
    const unreachable = (effect: Parameters<typeof policyFor>[1], c = config) => policyFor(c, effect).unreachable;
    expect(["money", "destructive", "unclassified"].map((e) => unreachable(e as never))).toEqual(["fail_closed", "fail_closed", "fail_closed"]);
    expect(["read", "create", "send"].map((e) => unreachable(e as never))).toEqual(["fail_open", "fail_open", "fail_open"]);
    expect(unreachable("create", parseConfig({ effects: { create: { unreachable: "fail_closed" } } }, "t"))).toBe("fail_closed");
  });
});
