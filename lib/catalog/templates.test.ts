import { describe, expect, it } from "vitest";
import {
  defaultSummary,
  oneLine,
  renderRunbookUrl,
  renderSummary,
  runbookUrlSchema,
  summarize,
  summaryTemplateSchema,
} from "./templates";

const refund = {
  tool: "create_refund",
  idempotencyKey: "rf-7/ä b",
  args: { amount: 1200, currency: "EUR", customer: "cus_9", charge: { id: "ch_1", tags: ["vip", "eu"] }, note: null },
};

describe("summary templates", () => {
  it.each([
    ["{{args.amount}} {{args.currency}} to {{args.customer}}", "1200 EUR to cus_9"],
    ["{{tool}} {{idempotency_key}}", "create_refund rf-7/ä b"],
    ["charge {{ args.charge.id }} ({{args.charge.tags.1}})", "charge ch_1 (eu)"],
    ["tags {{args.charge.tags}}", 'tags ["vip","eu"]'],
    ["{{args.missing}} and {{args.note}} and {{args.amount.x}}", "? and ? and ?"],
    ["<b>{{args.customer}}</b>", "<b>cus_9</b>"],
  ])("%s → %s", (template, expected) => {
    expect(renderSummary(template, refund)).toBe(expected);
  });

  it("a value cannot break the line or the length", () => {
    const long = renderSummary("to {{args.who}}", { ...refund, args: { who: `a\nb\t\u0007c${"x".repeat(500)}` } });
    expect(long.startsWith("to a b c")).toBe(true);
    expect(long).toHaveLength(200);
    expect(long.endsWith("…")).toBe(true);
    expect(oneLine("  a \r\n b  ")).toBe("a b");
  });

  it("refuses unknown placeholders, control characters and more than 200 characters", () => {
    expect(summaryTemplateSchema.safeParse("{{args.amount}} to {{args.customer}}").success).toBe(true);
    for (const bad of ["{{secret}}", "{{args}}", "{{args.}}", "a\nb", "x".repeat(201), "  "])
      expect(summaryTemplateSchema.safeParse(bad).success, bad).toBe(false);
  });

  it("without a template: the first four scalar arguments, objects and nulls passed over", () => {
    expect(defaultSummary(refund.args)).toBe("amount 1200 · currency EUR · customer cus_9");
    expect(defaultSummary({ a: 1, b: true, c: "x", d: 2.5, e: "not shown" })).toBe("a 1 · b true · c x · d 2.5");
    expect(defaultSummary({ nested: { a: 1 } })).toBeNull();
    expect(defaultSummary(null)).toBeNull();
    expect(defaultSummary([1, 2])).toBeNull();
    expect(summarize(null, refund)).toBe("amount 1200 · currency EUR · customer cus_9");
    expect(summarize("{{tool}}", { ...refund, args: null })).toBe("create_refund");
    expect(summarize(null, { ...refund, args: null })).toBeNull();
  });
});

describe("runbook URLs", () => {
  it("encodes every value", () => {
    expect(
      renderRunbookUrl("https://dashboard.example.com/refunds?q={{idempotency_key}}&c={{args.customer}}", refund),
    ).toEqual({
      url: "https://dashboard.example.com/refunds?q=rf-7%2F%C3%A4%20b&c=cus_9",
      host: "dashboard.example.com",
    });
    const hostile = renderRunbookUrl("https://d.example.com/r/{{args.x}}", {
      ...refund,
      args: { x: "../../admin?x=1#y" },
    });
    expect(hostile?.url).toBe("https://d.example.com/r/..%2F..%2Fadmin%3Fx%3D1%23y");
    expect(renderRunbookUrl("https://d.example.com/r/{{args.none}}", refund)?.url).toBe("https://d.example.com/r/");
  });

  it("accepts http(s) with a fixed host only", () => {
    for (const good of [
      "https://d.example.com/r?q={{idempotency_key}}",
      "http://localhost:3000/x",
      "https://d.example.com",
    ])
      expect(runbookUrlSchema.safeParse(good).success, good).toBe(true);
    for (const bad of [
      "javascript:alert(1)",
      "ftp://d.example.com/{{tool}}",
      "https://{{args.host}}/r",
      "https://d.example.com{{args.x}}",
      "data:text/html,<script>",
      "//d.example.com/r",
      "https://d.example.com/{{password}}",
    ])
      expect(runbookUrlSchema.safeParse(bad).success, bad).toBe(false);
  });
});
