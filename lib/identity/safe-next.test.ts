import { describe, expect, it } from "vitest";
import { safeNext } from "./safe-next";

describe("safeNext: only pages of this site", () => {
  it.each([
    ["/", "/"],
    ["/invocations/inv-1?runtime=a#events", "/invocations/inv-1?runtime=a#events"],
    ["/tasks/ord%207", "/tasks/ord%207"],
    ["/audit?actor=ana%40example.com", "/audit?actor=ana%40example.com"],
  ])("keeps %s", (next, expected) => {
    expect(safeNext(next)).toBe(expected);
  });

  it.each([
    "//evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/%5Cevil.example",
    "/%09/evil.example",
    "https://evil.example/",
    "http:evil.example",
    "javascript:alert(1)",
    "evil.example",
    "",
  ])("sends %j to / instead", (next) => {
    expect(safeNext(next)).toBe("/");
  });

  it("takes the first of repeated parameters, and nothing is /", () => {
    expect(safeNext(["/audit", "//evil.example"])).toBe("/audit");
    expect(safeNext(undefined)).toBe("/");
    expect(safeNext(null)).toBe("/");
  });
});
