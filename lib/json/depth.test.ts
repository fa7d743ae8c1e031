import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestsDeeperThan, tooDeepMember } from "./depth";

function nest(depth: number, kind: "array" | "object"): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i += 1) value = kind === "array" ? [value] : { d: value };
  return value;
}

describe("nesting depth, measured without recursion", () => {
  it("counts levels of arrays and objects: a scalar is 0, [] and {} are 1", () => {
    expect(nestsDeeperThan("x", 0)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
    expect(nestsDeeperThan([], 0)).toBe(true);
    expect(nestsDeeperThan([], 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 4)).toBe(false);
    for (const kind of ["array", "object"] as const) {
      expect(nestsDeeperThan(nest(MAX_JSON_DEPTH, kind), MAX_JSON_DEPTH)).toBe(false);
      expect(nestsDeeperThan(nest(MAX_JSON_DEPTH + 1, kind), MAX_JSON_DEPTH)).toBe(true);
    }
  });

  it("finds the deep branch among wide shallow ones, and a member named __proto__", () => {
    const wide = Array.from({ length: 1000 }, (_, i) => ({ i, tags: ["a", "b"] }));
    expect(nestsDeeperThan([...wide, nest(10, "array")], 10)).toBe(true);
    expect(nestsDeeperThan(wide, 10)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(`{"__proto__": ${"[".repeat(20)}${"]".repeat(20)}}`), 10)).toBe(true);
  });

  it("measures a value nested 100,000 deep without overflowing the stack", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`) as unknown;
    expect(nestsDeeperThan(deep, MAX_JSON_DEPTH)).toBe(true);
  });

  it("names the member of a record that is too deep (the record itself is one level)", () => {
    expect(tooDeepMember({ task_id: "t", envelope: nest(MAX_JSON_DEPTH - 1, "object") }, MAX_JSON_DEPTH)).toBeNull();
    expect(tooDeepMember({ task_id: "t", envelope: nest(MAX_JSON_DEPTH, "object") }, MAX_JSON_DEPTH)).toBe("envelope");
    expect(tooDeepMember({ task_id: "t", extra: nest(5000, "array"), envelope: {} }, MAX_JSON_DEPTH)).toBe("extra");
  });
});
