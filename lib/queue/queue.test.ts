import { describe, expect, it } from "vitest";
import { ageSeconds, normalizeQueueQuery, queueQuerySchema } from "./queue";

describe("queue filters from a URL", () => {
  it("ignores blank values, reads lists and `all`, and defaults the page size", () => {
    expect(queueQuerySchema.parse({ tool: "", q: "  ", status: "outcome_unknown, stalled" })).toEqual({
      status: ["outcome_unknown", "stalled"],
      limit: 50,
    });
    expect(queueQuerySchema.parse({ status: "all", effect_class: "money,unclassified", limit: "200" })).toEqual({
      status: "all",
      effect_class: ["money", "unclassified"],
      limit: 200,
    });
  });

  it("refuses what it does not understand rather than guessing", () => {
    for (const bad of [
      { status: "happy" },
      { effect_class: "cheap" },
      { age: "soon" },
      { age: "15" },
      { limit: "0" },
      { limit: "201" },
    ]) {
      expect(queueQuerySchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it("reads ages in minutes, hours and days", () => {
    expect(ageSeconds("15m")).toBe(900);
    expect(ageSeconds("4h")).toBe(14_400);
    expect(ageSeconds("7d")).toBe(604_800);
  });

  it("keeps only the queue's own filters, in one order, for saved views and shared links", () => {
    expect(normalizeQueueQuery("?q=ord-1&cursor=abc&limit=5&junk=1&effect_class=money&status=")).toBe(
      "effect_class=money&q=ord-1",
    );
    expect(normalizeQueueQuery(new URLSearchParams("age=1h&runtime=billing-agent"))).toBe(
      "runtime=billing-agent&age=1h",
    );
    expect(normalizeQueueQuery("")).toBe("");
  });
});
