import { describe, expect, it } from "vitest";
import { axisOf } from "@/components/timeline/axis";
import { OVERVIEW_SCALE, overviewOf } from "@/components/timeline/overview";
import { buildTimeline, type TimelineAttempt, type TimelineEvent, type TimelineInvocation } from "./timeline-builder";

const T0 = Date.parse("2026-11-29T05:12:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const opts = (nowS: number) => ({ now: new Date(T0 + nowS * 1000), stallWindowS: 300 });

let seq = 0;
function rec(r: Partial<TimelineAttempt> & Pick<TimelineAttempt, "phase" | "at">): TimelineAttempt {
  seq += 1;
  return {
    event_id: `e${seq}`,
    attempt_id: null,
    attempt: 1,
    received_at: r.at,
    budget_left_s: null,
    dialect: r.phase === "intent" ? "settle" : "mcp",
    wrapper_dialect: null,
    outcome: "unknown",
    commit_state: "unknown",
    code: null,
    category: null,
    retry: { directive: "never", not_before: null, max_attempts_remaining: null },
    next_action: "none",
    dispatch_stage: null,
    probe_result: null,
    safe_details: {},
    agent_message: null,
    user_message: null,
    items: [],
    envelope: null,
    args_digest: null,
    arguments: null,
    ignored: [],
    ...r,
  };
}

function inv(p: Partial<TimelineInvocation>): TimelineInvocation {
  const attempts = p.attempts ?? [];
  return {
    invocation_id: "inv-1",
    task_id: "ord-1",
    runtime: "rt",
    tool: "create_order",
    effect_class: "create",
    idempotency_key: null,
    status: "outcome_unknown",
    commit_state: "unknown",
    next_action: "verify_operation",
    version: 1,
    conflict: false,
    attempt_count: 1,
    first_seen_at: attempts[0]?.at ?? at(0),
    last_attempt_at: attempts[attempts.length - 1]?.at ?? at(0),
    status_since: at(0),
    stall_at: null,
    not_before: null,
    assignee: null,
    user_message: null,
    args_digest: null,
    possible_duplicate_of: null,
    duplicate_review: null,
    resolution: null,
    actions: [],
    ...p,
    attempts,
  };
}

/** The story as short words, top to bottom. */
function story(events: TimelineEvent[]): string[] {
  return events.map((e) => {
    switch (e.kind) {
      case "record":
        return `${e.phase}#${e.attempt}${e.retry_of ? ` retry-of#${e.retry_of}` : ""}${e.unanswered ? " unanswered" : ""}`;
      case "gap":
        return `gap:${e.gap} ${e.ms / 1000}s${e.open ? " open" : ""}`;
      case "action":
        return `action:${e.entry.action} ${e.entry.from_status}->${e.entry.to_status}`;
      case "marker":
        return `marker:${e.marker}`;
    }
  });
}

describe("buildTimeline", () => {
  it("seed 002 fixture 1: intent, unknown outcome, verification asked, probe found → reconciled", () => {
    const t = buildTimeline(
      [
        inv({
          status: "reconciled",
          commit_state: "committed",
          resolution: { commit_state: "committed", by: "probe", actor: null, at: at(20), note: null },
          attempts: [
            rec({ phase: "intent", at: at(0) }),
            rec({ phase: "outcome", at: at(8), dispatch_stage: "dispatched", next_action: "verify_operation" }),
            rec({ phase: "probe", at: at(20), commit_state: "committed", outcome: "ok", dialect: "settle" }),
          ],
          actions: [{ action: "request_verification", actor: "ana@example.com", at: at(10), from_status: "outcome_unknown", to_status: "verifying", note: "please probe" }],
        }),
      ],
      opts(60),
    );
    expect(story(t.events)).toEqual([
      "intent#1",
      "gap:awaiting_outcome 8s",
      "outcome#1",
      "gap:unsettled 12s",
      "action:request_verification outcome_unknown->verifying",
      "probe#1",
    ]);
    expect(t.start).toBe(at(0));
    expect(t.end).toBe(at(20));
    const gap = t.events[1];
    // The outcome came 8 s in, long before the default 300 s window would have passed.
    expect(gap).toMatchObject({ kind: "gap", until: at(8), open: false, stall_at: at(300) });
    expect(t.events.some((e) => e.kind === "marker")).toBe(false);
  });

  it("a retry after not committed is marked as a retry of the same invocation, with the pause before it", () => {
    const t = buildTimeline(
      [
        inv({
          status: "succeeded",
          commit_state: "committed",
          attempts: [
            rec({ phase: "intent", at: at(0) }),
            rec({ phase: "outcome", at: at(2), outcome: "retryable", commit_state: "not_committed", next_action: "wait_and_retry" }),
            rec({ phase: "intent", attempt: 2, at: at(32) }),
            rec({ phase: "outcome", attempt: 2, at: at(35), outcome: "ok", commit_state: "committed" }),
          ],
        }),
      ],
      opts(60),
    );
    expect(story(t.events)).toEqual([
      "intent#1",
      "gap:awaiting_outcome 2s",
      "outcome#1",
      "gap:before_retry 30s",
      "intent#2 retry-of#1",
      "gap:awaiting_outcome 3s",
      "outcome#2",
    ]);
  });

  it("an intent still without an outcome: the open gap runs to now and the stall marker sits where the window passed", () => {
    const t = buildTimeline(
      [inv({ status: "stalled", commit_state: "unknown", stall_at: at(42), attempts: [rec({ phase: "intent", at: at(0) })] })],
      opts(400),
    );
    expect(story(t.events)).toEqual(["intent#1 unanswered", "gap:no_outcome 400s open", "marker:stalled"]);
    expect(t.events[2]).toMatchObject({ at: at(42), window_s: 42, intent_at: at(0) });
    expect(t.end).toBe(at(400));
  });

  it("an intent within its window is open with the time it will stall, and no marker yet", () => {
    const t = buildTimeline([inv({ status: "pending", stall_at: at(300), attempts: [rec({ phase: "intent", at: at(0) })] })], opts(10));
    expect(story(t.events)).toEqual(["intent#1 unanswered", "gap:no_outcome 10s open"]);
    expect(t.events[1]).toMatchObject({ stall_at: at(300) });
  });

  it.each([
    [42, at(42)],
    [null, at(300)],
  ])("an outcome that came after the stall window (budget %s) shows when the invocation became stalled", (budget, stalledAt) => {
    const t = buildTimeline(
      [inv({ attempts: [rec({ phase: "intent", at: at(0), budget_left_s: budget }), rec({ phase: "outcome", at: at(400) })] })],
      opts(500),
    );
    expect(story(t.events)).toEqual(["intent#1", "gap:awaiting_outcome 400s", "marker:stalled", "outcome#1", "gap:unsettled 100s open"]);
    expect(t.events[2]!.at).toBe(stalledAt);
    expect(t.events[1]).toMatchObject({ stall_at: stalledAt });
  });

  it("an operator who settles a stalled intent ends its gap", () => {
    const t = buildTimeline(
      [
        inv({
          status: "reconciled",
          commit_state: "not_committed",
          resolution: { commit_state: "not_committed", by: "operator", actor: "ana", at: at(600), note: "no order" },
          attempts: [rec({ phase: "intent", at: at(0), budget_left_s: null })],
          actions: [{ action: "mark_reconciled", actor: "ana", at: at(600), from_status: "stalled", to_status: "reconciled", note: "no order" }],
        }),
      ],
      opts(900),
    );
    expect(story(t.events)).toEqual(["intent#1 unanswered", "gap:no_outcome 600s", "marker:stalled", "action:mark_reconciled stalled->reconciled"]);
    expect(t.end).toBe(at(600));
  });

  it("an intent that cannot reopen an unknown outcome never stalls (seed 004's second dispatch)", () => {
    const t = buildTimeline(
      [
        inv({
          status: "reconciled",
          commit_state: "committed",
          resolution: { commit_state: "committed", by: "probe", actor: null, at: at(20), note: null },
          attempts: [
            rec({ phase: "intent", at: at(0) }),
            rec({ phase: "outcome", at: at(3), dispatch_stage: "evidence_failed", dialect: "seed004" }),
            rec({ phase: "intent", attempt: 2, at: at(10), budget_left_s: 5 }),
            rec({ phase: "probe", attempt: 1, at: at(20), commit_state: "committed" }),
          ],
        }),
      ],
      opts(3600),
    );
    expect(story(t.events)).toEqual([
      "intent#1",
      "gap:awaiting_outcome 3s",
      "outcome#1",
      "gap:before_retry 7s",
      "gap:unsettled 17s",
      "intent#2 retry-of#1 unanswered",
      "probe#1",
    ]);
  });

  it("evidence that contradicts a committed outcome is flagged where it arrived", () => {
    const t = buildTimeline(
      [
        inv({
          conflict: true,
          attempts: [
            rec({ phase: "outcome", at: at(0), outcome: "ok", commit_state: "committed" }),
            rec({ phase: "probe", at: at(60), outcome: "permanent", commit_state: "not_committed" }),
          ],
        }),
      ],
      opts(100),
    );
    expect(story(t.events)).toEqual(["outcome#1", "probe#1", "marker:conflict", "gap:unsettled 40s open"]);
    expect(t.events[2]).toMatchObject({ at: at(60), settled: { commit_state: "committed", by: "outcome" }, evidence: "not_committed" });
  });

  it("a probe that finds what an operator settled as not committed is a conflict with the operator's settlement", () => {
    const t = buildTimeline(
      [
        inv({
          conflict: true,
          resolution: { commit_state: "not_committed", by: "operator", actor: "ana", at: at(30), note: "none in ledger" },
          attempts: [rec({ phase: "outcome", at: at(0) }), rec({ phase: "probe", at: at(90), commit_state: "committed", outcome: "ok" })],
          actions: [{ action: "mark_reconciled", actor: "ana", at: at(30), from_status: "outcome_unknown", to_status: "reconciled", note: "none in ledger" }],
        }),
      ],
      opts(100),
    );
    expect(story(t.events)).toEqual([
      "outcome#1",
      "gap:unsettled 30s",
      "action:mark_reconciled outcome_unknown->reconciled",
      "probe#1",
      "marker:conflict",
      "gap:unsettled 10s open",
    ]);
    expect(t.events[4]).toMatchObject({ settled: { commit_state: "not_committed", by: "operator" }, evidence: "committed" });
  });

  it.each([1, 2])("a committed retry (attempt %i) after a tool's own not-committed is not a conflict", (retryAttempt) => {
    const t = buildTimeline(
      [
        inv({
          status: "succeeded",
          attempts: [
            rec({ phase: "outcome", at: at(0), outcome: "retryable", commit_state: "not_committed", next_action: "wait_and_retry" }),
            rec({ phase: "outcome", attempt: retryAttempt, at: at(30), outcome: "ok", commit_state: "committed" }),
          ],
        }),
      ],
      opts(100),
    );
    expect(t.events.filter((e) => e.kind === "marker")).toEqual([]);
  });

  it("an unnumbered probe speaks for the latest attempt before it", () => {
    const t = buildTimeline(
      [
        inv({
          attempts: [
            rec({ phase: "outcome", attempt: 1, at: at(0), outcome: "retryable", commit_state: "not_committed", next_action: "wait_and_retry" }),
            rec({ phase: "outcome", attempt: 2, at: at(30) }),
            rec({ phase: "probe", attempt: null, at: at(40), commit_state: "committed" }),
          ],
        }),
      ],
      opts(100),
    );
    expect(story(t.events)).toEqual(["outcome#1", "gap:before_retry 30s", "outcome#2 retry-of#1", "gap:unsettled 10s", "probe#2"]);
  });

  it("a task puts its invocations in lanes by first sight and interleaves their stories on one axis", () => {
    const second = inv({ invocation_id: "inv-b", tool: "send_email", status: "succeeded", attempts: [rec({ phase: "outcome", at: at(5), outcome: "ok", commit_state: "committed" })] });
    const first = inv({ invocation_id: "inv-a", attempts: [rec({ phase: "intent", at: at(0) }), rec({ phase: "outcome", at: at(10) })] });
    const t = buildTimeline([second, first], opts(100));
    expect(t.lanes.map((l) => [l.index, l.invocation.invocation_id, l.start, l.end])).toEqual([
      [0, "inv-a", at(0), at(100)],
      [1, "inv-b", at(5), at(5)],
    ]);
    expect(t.events.map((e) => `${e.invocation_id}:${e.kind}`)).toEqual(["inv-a:record", "inv-a:gap", "inv-b:record", "inv-a:record", "inv-a:gap"]);
    expect(new Set(t.events.map((e) => e.key)).size).toBe(t.events.length);
    expect(t.lanes[0]!.invocation).not.toHaveProperty("attempts");
  });

  it("an empty task is an empty axis at now", () => {
    const t = buildTimeline([], opts(0));
    expect(t).toEqual({ start: at(0), end: at(0), now: at(0), lanes: [], events: [] });
  });
});

describe("axisOf", () => {
  const events = (...seconds: number[]) => buildTimeline([inv({ attempts: seconds.map((s) => rec({ phase: "outcome", at: at(s) })) })], opts(0));

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
    const stalled = inv({ invocation_id: "inv-s", status: "pending", stall_at: at(300), attempts: [rec({ phase: "intent", at: at(0), user_message: "secret words" })] });
    const done = inv({ invocation_id: "inv-d", status: "succeeded", attempts: [rec({ phase: "intent", at: at(10) }), rec({ phase: "outcome", at: at(20), commit_state: "committed", outcome: "ok" })] });
    const o = overviewOf(buildTimeline([done, stalled], opts(600)));
    expect(o.lanes.map((l) => l.invocation_id)).toEqual(["inv-s", "inv-d"]);
    const [s, d] = o.lanes;
    expect(s!.marks.map((m) => m[2])).toEqual(["i", "s"]);
    expect(s!.bars).toEqual([["W", 0, expect.any(Number), expect.any(Number)]]);
    expect(s!.bars[0]![3]).toBeGreaterThan(0);
    expect(s!.bars[0]![3]).toBeLessThan(s!.bars[0]![2]);
    expect(d!.marks.map((m) => [m[2], m[3], m[4], m[5]])).toEqual([["i", 1, 10_000, 1], ["o:committed", 1, 20_000, 1]]);
    // Still waiting: the now line is drawn, at the right edge.
    expect(o.now).toBe(OVERVIEW_SCALE);
    expect(JSON.stringify(o)).not.toMatch(/secret words|event_id|envelope/);
  });
});
