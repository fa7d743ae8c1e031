import { describe, expect, it } from "vitest";
import { buildTimeline } from "./timeline-builder";
import { at, inv, opts, rec, reconciledByProbe, story } from "./__tests__/timeline-fixtures";

describe("buildTimeline", () => {
  it("source article 002 (docs/outcome-model.md) fixture 1: intent, unknown outcome, verification asked, probe found → reconciled", () => {
    const t = buildTimeline(
      [
        reconciledByProbe({
          attempts: [
            rec({ phase: "outcome", at: at(8), dispatch_stage: "dispatched", next_action: "verify_operation" }),
            rec({ phase: "probe", at: at(20), commit_state: "committed", outcome: "ok", dialect: "settle" }),
          ],
          actions: [
            {
              action: "request_verification",
              actor: "ana@example.com",
              at: at(10),
              from_status: "outcome_unknown",
              to_status: "verifying",
              note: "please probe",
            },
          ],
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
            rec({
              phase: "outcome",
              at: at(2),
              outcome: "retryable",
              commit_state: "not_committed",
              next_action: "wait_and_retry",
            }),
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
      [
        inv({
          status: "stalled",
          commit_state: "unknown",
          stall_at: at(42),
          attempts: [rec({ phase: "intent", at: at(0) })],
        }),
      ],
      opts(400),
    );
    expect(story(t.events)).toEqual(["intent#1 unanswered", "gap:no_outcome 400s open", "marker:stalled"]);
    expect(t.events[2]).toMatchObject({ at: at(42), window_s: 42, intent_at: at(0) });
    expect(t.end).toBe(at(400));
  });

  it("an intent within its window is open with the time it will stall, and no marker yet", () => {
    const t = buildTimeline(
      [inv({ status: "pending", stall_at: at(300), attempts: [rec({ phase: "intent", at: at(0) })] })],
      opts(10),
    );
    expect(story(t.events)).toEqual(["intent#1 unanswered", "gap:no_outcome 10s open"]);
    expect(t.events[1]).toMatchObject({ stall_at: at(300) });
  });

  it.each([
    [42, at(42)],
    [null, at(300)],
  ])(
    "an outcome that came after the stall window (budget %s) shows when the invocation became stalled",
    (budget, stalledAt) => {
      const t = buildTimeline(
        [
          inv({
            attempts: [
              rec({ phase: "intent", at: at(0), budget_left_s: budget }),
              rec({ phase: "outcome", at: at(400) }),
            ],
          }),
        ],
        opts(500),
      );
      expect(story(t.events)).toEqual([
        "intent#1",
        "gap:awaiting_outcome 400s",
        "marker:stalled",
        "outcome#1",
        "gap:unsettled 100s open",
      ]);
      expect(t.events[2]!.at).toBe(stalledAt);
      expect(t.events[1]).toMatchObject({ stall_at: stalledAt });
    },
  );

  it("an operator who settles a stalled intent ends its gap", () => {
    const t = buildTimeline(
      [
        inv({
          status: "reconciled",
          commit_state: "not_committed",
          resolution: { commit_state: "not_committed", by: "operator", actor: "ana", at: at(600), note: "no order" },
          attempts: [rec({ phase: "intent", at: at(0), budget_left_s: null })],
          actions: [
            {
              action: "mark_reconciled",
              actor: "ana",
              at: at(600),
              from_status: "stalled",
              to_status: "reconciled",
              note: "no order",
            },
          ],
        }),
      ],
      opts(900),
    );
    expect(story(t.events)).toEqual([
      "intent#1 unanswered",
      "gap:no_outcome 600s",
      "marker:stalled",
      "action:mark_reconciled stalled->reconciled",
    ]);
    expect(t.end).toBe(at(600));
  });

  it("an intent that cannot reopen an unknown outcome never stalls (source article 004 (docs/outcome-model.md)'s second dispatch)", () => {
    const t = buildTimeline(
      [
        reconciledByProbe({
          attempts: [
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
    expect(t.events[2]).toMatchObject({
      at: at(60),
      settled: { commit_state: "committed", by: "outcome" },
      evidence: "not_committed",
    });
  });

  it("a probe that finds what an operator settled as not committed is a conflict with the operator's settlement", () => {
    const t = buildTimeline(
      [
        inv({
          conflict: true,
          resolution: {
            commit_state: "not_committed",
            by: "operator",
            actor: "ana",
            at: at(30),
            note: "none in ledger",
          },
          attempts: [
            rec({ phase: "outcome", at: at(0) }),
            rec({ phase: "probe", at: at(90), commit_state: "committed", outcome: "ok" }),
          ],
          actions: [
            {
              action: "mark_reconciled",
              actor: "ana",
              at: at(30),
              from_status: "outcome_unknown",
              to_status: "reconciled",
              note: "none in ledger",
            },
          ],
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
    expect(t.events[4]).toMatchObject({
      settled: { commit_state: "not_committed", by: "operator" },
      evidence: "committed",
    });
  });

  it.each([1, 2])(
    "a committed retry (attempt %i) after a tool's own not-committed is not a conflict",
    (retryAttempt) => {
      const t = buildTimeline(
        [
          inv({
            status: "succeeded",
            attempts: [
              rec({
                phase: "outcome",
                at: at(0),
                outcome: "retryable",
                commit_state: "not_committed",
                next_action: "wait_and_retry",
              }),
              rec({ phase: "outcome", attempt: retryAttempt, at: at(30), outcome: "ok", commit_state: "committed" }),
            ],
          }),
        ],
        opts(100),
      );
      expect(t.events.filter((e) => e.kind === "marker")).toEqual([]);
    },
  );

  it("an unnumbered probe speaks for the latest attempt before it", () => {
    const t = buildTimeline(
      [
        inv({
          attempts: [
            rec({
              phase: "outcome",
              attempt: 1,
              at: at(0),
              outcome: "retryable",
              commit_state: "not_committed",
              next_action: "wait_and_retry",
            }),
            rec({ phase: "outcome", attempt: 2, at: at(30) }),
            rec({ phase: "probe", attempt: null, at: at(40), commit_state: "committed" }),
          ],
        }),
      ],
      opts(100),
    );
    expect(story(t.events)).toEqual([
      "outcome#1",
      "gap:before_retry 30s",
      "outcome#2 retry-of#1",
      "gap:unsettled 10s",
      "probe#2",
    ]);
  });

  it("a task puts its invocations in lanes by first sight and interleaves their stories on one axis", () => {
    const second = inv({
      invocation_id: "inv-b",
      tool: "send_email",
      status: "succeeded",
      attempts: [rec({ phase: "outcome", at: at(5), outcome: "ok", commit_state: "committed" })],
    });
    const first = inv({
      invocation_id: "inv-a",
      attempts: [rec({ phase: "intent", at: at(0) }), rec({ phase: "outcome", at: at(10) })],
    });
    const t = buildTimeline([second, first], opts(100));
    expect(t.lanes.map((l) => [l.index, l.invocation.invocation_id, l.start, l.end])).toEqual([
      [0, "inv-a", at(0), at(100)],
      [1, "inv-b", at(5), at(5)],
    ]);
    expect(t.events.map((e) => `${e.invocation_id}:${e.kind}`)).toEqual([
      "inv-a:record",
      "inv-a:gap",
      "inv-b:record",
      "inv-a:record",
      "inv-a:gap",
    ]);
    expect(new Set(t.events.map((e) => e.key)).size).toBe(t.events.length);
    expect(t.lanes[0]!.invocation).not.toHaveProperty("attempts");
  });

  it("an empty task is an empty axis at now", () => {
    const t = buildTimeline([], opts(0));
    expect(t).toEqual({ start: at(0), end: at(0), now: at(0), lanes: [], events: [] });
  });
});
