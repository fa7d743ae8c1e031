import { describe, expect, it } from "vitest";
import { parseConfig, policyFor } from "../src/config.js";
import { catalogEffectFor, classifyEffect, ruleFor } from "../src/effects.js";
import { createSettleCatalog } from "../src/settle-catalog.js";

// The configuration decides the effect class, then Settle's tool catalog;
// the server's annotations are untrusted defaults (a tool may claim readOnlyHint and charge a card).

const config = parseConfig(
  {
    tools: [
      { match: "charge_*", effect: "money" },
      { match: "*_delete", effect: "destructive" },
      { match: "get_order", effect: "read" },
    ],
  },
  "test",
);

describe("classifyEffect", () => {
  it("takes the configured class over a lying readOnlyHint", () => {
    expect(classifyEffect(config, ruleFor(config, "charge_card"), { readOnlyHint: true })).toEqual({
      effect: "money",
      source: "config",
    });
  });

  it("matches patterns, first rule first", () => {
    expect(ruleFor(config, "user_delete")?.effect).toBe("destructive");
    expect(ruleFor(config, "charge_cards_now")?.effect).toBe("money");
    expect(ruleFor(config, "get_orders")).toBeNull();
  });

  it("reads annotations only as defaults: read-only, destructive, or a plain write when destructiveHint is false", () => {
    expect(classifyEffect(config, null, { readOnlyHint: true })).toEqual({ effect: "read", source: "annotations" });
    expect(classifyEffect(config, null, { destructiveHint: true })).toEqual({
      effect: "destructive",
      source: "annotations",
    });
    expect(classifyEffect(config, null, { destructiveHint: false })).toEqual({
      effect: "create",
      source: "annotations",
    });
    expect(classifyEffect(config, null, {})).toEqual({ effect: "unclassified", source: "default" });
    expect(classifyEffect(parseConfig({ default_effect: "send" }, "t"), null, undefined)).toEqual({
      effect: "send",
      source: "default",
    });
  });
});

describe("policyFor", () => {
  it("fails closed for money, destructive and what nothing classifies, open for reads and plain writes, unless configured", () => {
    const unreachable = (effect: Parameters<typeof policyFor>[1], c = config) => policyFor(c, effect).unreachable;
    expect(["money", "destructive", "unclassified"].map((e) => unreachable(e as never))).toEqual([
      "fail_closed",
      "fail_closed",
      "fail_closed",
    ]);
    expect(["read", "create", "send"].map((e) => unreachable(e as never))).toEqual([
      "fail_open",
      "fail_open",
      "fail_open",
    ]);
    expect(unreachable("create", parseConfig({ effects: { create: { unreachable: "fail_closed" } } }, "t"))).toBe(
      "fail_closed",
    );
  });
});

describe("Settle's tool catalog (settle_catalog)", () => {
  // As GET /api/v1/tool-catalog answers: most specific first.
  const entries = [
    { pattern: "charge_preview", effect_class: "read" },
    { pattern: "charge_*", effect_class: "send" },
    { pattern: "*", effect_class: "create" },
  ] as const;

  it("takes the first entry that matches, in Settle's order", () => {
    expect(catalogEffectFor(entries, "charge_preview")).toBe("read");
    expect(catalogEffectFor(entries, "charge_now")).toBe("send");
    expect(catalogEffectFor(entries, "anything")).toBe("create");
    expect(catalogEffectFor([], "anything")).toBeNull();
  });

  it("comes after the configuration's rules and before the server's annotations", () => {
    const fromSettle = (tool: string) => catalogEffectFor(entries, tool);
    expect(classifyEffect(config, ruleFor(config, "charge_card"), undefined, fromSettle("charge_card"))).toEqual({
      effect: "money",
      source: "config",
    });
    expect(classifyEffect(config, ruleFor(config, "charge_preview"), undefined, fromSettle("charge_preview"))).toEqual({
      effect: "money",
      source: "config",
    });
    expect(classifyEffect(config, null, { readOnlyHint: true }, fromSettle("list_things"))).toEqual({
      effect: "create",
      source: "settle_catalog",
    });
    const keyOnly = parseConfig({ tools: [{ match: "charge_preview", key_args: ["id"] }] }, "t");
    expect(
      classifyEffect(keyOnly, ruleFor(keyOnly, "charge_preview"), undefined, fromSettle("charge_preview")),
    ).toEqual({ effect: "read", source: "settle_catalog" });
    expect(classifyEffect(config, null, { readOnlyHint: true }, null)).toEqual({
      effect: "read",
      source: "annotations",
    });
  });
});

describe("createSettleCatalog", () => {
  const answer = (status: number, body: unknown) => async () =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

  it("reads the key's catalog with the key, and keeps the last one read when Settle cannot be read", async () => {
    const seen: Array<{ url: string; auth: string | null }> = [];
    let next: () => Promise<Response> = answer(200, {
      runtime: "rt",
      items: [
        { pattern: "charge_*", effect_class: "money" },
        { pattern: "odd", effect_class: "write" },
      ],
    });
    const errors: string[] = [];
    const catalog = createSettleCatalog({
      url: "http://settle.test/",
      key: "stl_rk_test",
      refreshMs: 60_000,
      timeoutMs: 1000,
      onError: (m) => errors.push(m),
      fetch: async (input, init) => {
        seen.push({ url: String(input), auth: new Headers(init?.headers).get("authorization") });
        return next();
      },
    });
    try {
      expect(await catalog.refresh()).toBe(true);
      expect(seen).toEqual([{ url: "http://settle.test/api/v1/tool-catalog", auth: "Bearer stl_rk_test" }]);
      // An entry whose class the gateway does not know is left out, not guessed.
      expect(catalog.size()).toBe(1);
      expect(catalog.effectFor("charge_card")).toBe("money");
      expect(catalog.effectFor("odd")).toBeNull();

      next = answer(503, { ok: false, code: "DATABASE_UNAVAILABLE" });
      expect(await catalog.refresh()).toBe(false);
      next = async () => {
        throw new TypeError("fetch failed");
      };
      expect(await catalog.refresh()).toBe(false);
      expect(catalog.effectFor("charge_card")).toBe("money");
      expect(errors).toEqual([
        "Settle's tool catalog could not be read (HTTP 503 DATABASE_UNAVAILABLE); keeping the 1 entries read before",
        "Settle's tool catalog could not be read (fetch failed); keeping the 1 entries read before",
      ]);
    } finally {
      catalog.close();
    }
  });
});
