import { describe, expect, it } from "vitest";
import { auditQuerySchema, csvField, encodeAuditCursor } from "./audit";

describe("csvField", () => {
  it.each([
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
    ["cr\r\nlf", '"cr\r\nlf"'],
    ["=SUM(A1:A9)", "'=SUM(A1:A9)"],
    ["+1", "'+1"],
    ["-1", "'-1"],
    ["@cmd", "'@cmd"],
    ["\tTab", "'\tTab"],
    ["\rCR", '"\'\rCR"'],
    ['=HYPERLINK("x","y")', `"'=HYPERLINK(""x"",""y"")"`],
    ["a=b", "a=b"],
    ["", ""],
    ["ünïcødé ✓", "ünïcødé ✓"],
  ])("%j → %j", (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it("writes null as an empty field and numbers as they are", () => {
    expect(csvField(null)).toBe("");
    expect(csvField(42)).toBe("42");
  });
});

describe("auditQuerySchema", () => {
  it("reads a plain 'from' date as its UTC midnight and a plain 'to' date as the end of that day", () => {
    const q = auditQuerySchema.parse({ from: "2026-11-29", to: "2026-11-30" });
    expect(q.from?.toISOString()).toBe("2026-11-29T00:00:00.000Z");
    expect(q.to?.toISOString()).toBe("2026-12-01T00:00:00.000Z");
  });

  it("keeps times with an offset as given", () => {
    const q = auditQuerySchema.parse({ from: "2026-11-29T05:12:04+02:00", to: "2026-11-29T05:12:04Z" });
    expect(q.from?.toISOString()).toBe("2026-11-29T03:12:04.000Z");
    expect(q.to?.toISOString()).toBe("2026-11-29T05:12:04.000Z");
  });

  it("treats empty fields as absent and splits lists", () => {
    const q = auditQuerySchema.parse({ actor: "", from: "", action: "comment, escalate", to_status: "reconciled" });
    expect(q).toMatchObject({
      actor: undefined,
      from: undefined,
      action: ["comment", "escalate"],
      to_status: ["reconciled"],
      limit: 50,
      format: "json",
    });
  });

  it("round-trips a cursor, and refuses a bad cursor or a day that does not exist", () => {
    const at = new Date("2026-11-29T05:12:04.123Z");
    const id = "0b7f3c1e-8a2d-4d5e-9f00-123456789abc";
    expect(auditQuerySchema.parse({ cursor: encodeAuditCursor(at, id) }).cursor).toEqual({ at, id });
    expect(auditQuerySchema.safeParse({ cursor: "garbage" }).success).toBe(false);
    for (const from of ["2026-02-30", "2026-13-01", "2026-02-30T10:00:00Z", "yesterday"])
      expect(auditQuerySchema.safeParse({ from }).success).toBe(false);
  });
});
