import { describe, expect, it } from "vitest";
import { formatDuration, formatDurationExact, parseDuration } from "./durations";
import { builtInPolicy, resolvePolicy, type PolicySet, type PolicyValues } from "../policies/policies";
import { approvalsOf, escalatesBySla, slaOf } from "./sla";

const row = (effect_class: string, p: Partial<PolicyValues>) => ({
  ...builtInPolicy("*"),
  effect_class,
  updated_at: "2026-12-01T00:00:00.000Z",
  updated_by: "a@example.com",
  ...p,
});
const set: PolicySet = new Map([
  ["*", row("*", { overdue_after_s: 600, escalate_after_s: 3600 })],
  ["money", row("money", { escalate_after_s: 7200, approval_expires_after_s: 14400, approval_quorum: 2 })],
]);
const since = "2026-12-01T10:00:00.000Z";
const at = (s: number) => new Date(Date.parse(since) + s * 1000);

describe("policy resolution", () => {
  it("a class's own row is the whole policy; others and unclassified get the default; no rows: built in", () => {
    expect(resolvePolicy(set, "money")).toMatchObject({
      source: "own",
      overdue_after_s: null,
      escalate_after_s: 7200,
      approval_quorum: 2,
    });
    expect(resolvePolicy(set, "send")).toMatchObject({
      effect_class: "send",
      source: "default",
      overdue_after_s: 600,
      approval_quorum: 1,
    });
    expect(resolvePolicy(set, null)).toMatchObject({ effect_class: "*", source: "own" });
    expect(resolvePolicy(new Map(), "money")).toMatchObject({
      source: "built_in",
      escalate_after_s: null,
      approval_quorum: 1,
      updated_at: null,
    });
  });

  it("the built-in duplicate window: money and destructive a day, send an hour, the rest off; a row states its own", () => {
    const windows = (["money", "destructive", "send", "create", "read", null] as const).map(
      (c) => resolvePolicy(new Map(), c).duplicate_window_s,
    );
    expect(windows).toEqual([86_400, 86_400, 3_600, null, null, null]);
    expect(resolvePolicy(set, "money").duplicate_window_s).toBeNull();
    expect(
      resolvePolicy(new Map([["send", row("send", { duplicate_window_s: 600 })]]), "send").duplicate_window_s,
    ).toBe(600);
  });
});

describe("slaOf", () => {
  it("overdue after overdue_at; escalates_at from when the queue status began", () => {
    const send = resolvePolicy(set, "send");
    expect(slaOf({ status: "outcome_unknown", status_since: since }, send, at(599))).toMatchObject({
      policy: "*",
      overdue: false,
      escalates_at: at(3600).toISOString(),
    });
    expect(slaOf({ status: "stalled", status_since: since }, send, at(600))?.overdue).toBe(true);
    expect(slaOf({ status: "succeeded", status_since: since }, send, at(9999))).toBeNull();
  });

  it("an escalated invocation is not escalated again; an approval with an expiry expires instead of escalating", () => {
    const money = resolvePolicy(set, "money");
    expect(slaOf({ status: "escalated", status_since: since }, money, at(0))).toBeNull();
    expect(slaOf({ status: "awaiting_approval", status_since: since }, money, at(14400))).toMatchObject({
      overdue: true,
      escalates_at: null,
      expires_at: at(14400).toISOString(),
    });
    expect(escalatesBySla("awaiting_approval", resolvePolicy(set, "send"))).toBe(true);
    expect(escalatesBySla("awaiting_approval", money)).toBe(false);
  });

  it("counts the different people who approved since it began waiting", () => {
    const entry = (actor: string, from = "awaiting_approval", to = "awaiting_approval", action = "approve") =>
      ({ action, actor, at: at(5).toISOString(), from_status: from, to_status: to }) as never;
    const inv = {
      status: "awaiting_approval" as const,
      status_since: since,
      actions: [
        entry("old", "escalated", "escalated"),
        entry("ana"),
        entry("bo", "awaiting_approval", "awaiting_approval", "comment"),
      ],
    };
    expect(approvalsOf(inv, { approval_quorum: 2 })).toEqual({ count: 1, quorum: 2, by: ["ana"] });
    expect(approvalsOf({ ...inv, status: "approved" }, { approval_quorum: 2 })).toBeNull();
  });
});

describe("durations", () => {
  it("formats the two largest units and parses what people type", () => {
    expect([7500, 7200, 7201, 45, 0, 90_061].map(formatDuration)).toEqual(["2h 5m", "2h", "2h", "45s", "0s", "1d 1h"]);
    expect([90_061, 7200, 0].map(formatDurationExact)).toEqual(["1d 1h 1m 1s", "2h", "0s"]);
    expect(parseDuration(formatDurationExact(90_061))).toBe(90_061);
    expect(["2h 30m", "90m", "1d", "3600", " ", "2x", "h"].map(parseDuration)).toEqual([
      9000,
      5400,
      86_400,
      3600,
      null,
      undefined,
      undefined,
    ]);
  });
});
