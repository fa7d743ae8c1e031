import { describe, expect, it } from "vitest";
import { axisOf } from "@/components/timeline/axis";
import { OVERVIEW_SCALE, overviewOf } from "@/components/timeline/overview";
import { buildTimeline } from "./timeline-builder";
import { at, inv, opts, rec } from "./__tests__/timeline-fixtures";

describe("axisOf", () => {
  const events = (...seconds: number[]) =>
    buildTimeline([inv({ attempts: seconds.map((s) => rec({ phase: "outcome", at: at(s) })) })], opts(0));

  it("is linear when no interval stands out", () => {
    const t = events(0, 10, 20, 40, 42, 50);
    const axis = axisOf(t);
    expect(axis.breaks).toEqual([]);
    expect([0, 10, 20, 40, 50].map((s) => axis.x(at(s)))).toEqual([0, 0.2, 0.4, 0.8, 1]);
    expect(axis.x(at(5))).toBeCloseTo(0.1);
  });

  it("draws a much longer interval shorter, with a break that keeps its real length", () => {
    const t = events(0, 8, 20, 3000);
    const axis = axisOf(t);
    expect(axis.breaks).toHaveLength(1);
    expect(axis.breaks[0]!.ms).toBe(2_980_000);
    expect(axis.x(at(20))).toBeGreaterThan(0.25);
    expect(axis.x(at(3000))).toBe(1);
    const xs = [0, 4, 8, 20, 1000, 2999, 3000].map((s) => axis.x(at(s)));
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
  });

  it("does not break an interval only a little longer than the rest", () => {
    expect(axisOf(events(0, 4, 31, 34, 56, 57, 69, 72, 140, 150)).breaks).toEqual([]);
    expect(axisOf(events(0, 5, 32, 35, 56, 57, 70, 73, 141, 151, 152)).breaks).toEqual([]);
  });

  it("puts a single instant at the start", () => {
    expect(axisOf(events(5)).x(at(5))).toBe(0);
  });
});

describe("overviewOf (the task page's compact chart)", () => {
  it("sends marks and waits per lane, not the records they are drawn from", () => {
    const stalled = inv({
      invocation_id: "inv-s",
      status: "pending",
      stall_at: at(300),
      attempts: [rec({ phase: "intent", at: at(0), user_message: "secret words" })],
    });
    const done = inv({
      invocation_id: "inv-d",
      status: "succeeded",
      attempts: [
        rec({ phase: "intent", at: at(10) }),
        rec({ phase: "outcome", at: at(20), commit_state: "committed", outcome: "ok" }),
      ],
    });
    const o = overviewOf(buildTimeline([done, stalled], opts(600)));
    expect(o.lanes.map((l) => l.invocation_id)).toEqual(["inv-s", "inv-d"]);
    const [s, d] = o.lanes;
    expect(s!.marks.map((m) => m[2])).toEqual(["i", "s"]);
    expect(s!.bars).toEqual([["W", 0, expect.any(Number), expect.any(Number)]]);
    expect(s!.bars[0]![3]).toBeGreaterThan(0);
    expect(s!.bars[0]![3]).toBeLessThan(s!.bars[0]![2]);
    expect(d!.marks.map((m) => [m[2], m[3], m[4], m[5]])).toEqual([
      ["i", 1, 10_000, 1],
      ["o:committed", 1, 20_000, 1],
    ]);
    // Still waiting: the now line is drawn, at the right edge.
    expect(o.now).toBe(OVERVIEW_SCALE);
    expect(JSON.stringify(o)).not.toMatch(/secret words|event_id|envelope/);
  });
});
