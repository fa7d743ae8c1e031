import { describe, expect, it } from "vitest";
import type { InvocationView } from "@/lib/invocations/read";
import { buildPlan, runTagOf } from "./plan";
import { requiredTasks } from "./required";

const now = Date.UTC(2026, 10, 29, 12, 0, 0);
const records = (plan: ReturnType<typeof buildPlan>) =>
  plan.lines.map((l) => JSON.parse(l.text) as Record<string, unknown>);

describe("buildPlan", () => {
  it("is deterministic for a seed, and a different seed is a different run", () => {
    const a = buildPlan({ tasks: 60, seed: 7, now });
    const b = buildPlan({ tasks: 60, seed: 7, now });
    expect(b.lines).toEqual(a.lines);
    const c = buildPlan({ tasks: 60, seed: 8, now });
    expect(c.runTag).not.toBe(a.runTag);
    expect(runTagOf(7)).toBe(a.runTag);
    const taskIds = new Set(records(a).map((r) => r.task_id ?? r.task));
    expect([...taskIds].filter(Boolean).every((id) => String(id).includes(`-${a.runTag}-`))).toBe(true);
  });

  it("plays the required scenarios first and sends every dialect", () => {
    const plan = buildPlan({ tasks: requiredTasks.length, seed: 1, now });
    expect(plan.requiredPlayed).toBe(requiredTasks.length);
    const seen = new Set([...plan.ctx.dialects.keys()].flatMap((label) => label.split(" in ")));
    expect([...seen].sort()).toEqual([
      "anthropic",
      "mcp",
      "openai",
      "rfc9457",
      "seed001",
      "seed002",
      "seed003",
      "seed004",
      "settle",
      "unrecognized",
    ]);
    expect(plan.malformedLine).not.toBeNull();
    expect(plan.ctx.checks.length).toBeGreaterThanOrEqual(25);
  });

  it("writes intents before outcomes, all within the last hour", () => {
    const plan = buildPlan({ tasks: 300, seed: 3, now });
    const firstSeen = new Map<string, { intent?: number; outcome?: number }>();
    for (const r of records(plan)) {
      if (typeof r.at !== "string" || typeof r.attempt_id !== "string") continue;
      const at = Date.parse(r.at);
      expect(at).toBeLessThanOrEqual(now);
      expect(at).toBeGreaterThanOrEqual(now - 60 * 60_000);
      const entry = firstSeen.get(r.attempt_id) ?? {};
      entry[r.phase as "intent" | "outcome"] = at;
      firstSeen.set(r.attempt_id, entry);
    }
    for (const { intent, outcome } of firstSeen.values())
      if (intent !== undefined && outcome !== undefined) expect(intent).toBeLessThan(outcome);
  });

  it("sends some records twice, each copy after its original", () => {
    const plan = buildPlan({ tasks: 300, seed: 5, now });
    expect(plan.resent.size).toBeGreaterThan(0);
    for (const n of plan.resent) {
      const copy = plan.lines[n - 1]!;
      expect(plan.lines.slice(0, n - 1).some((l) => l.text === copy.text)).toBe(true);
    }
    expect(plan.outOfOrder).toBeGreaterThan(0);
  });

  it("plays fewer tasks than the required scenarios without failing", () => {
    const plan = buildPlan({ tasks: 1, seed: 1, now });
    expect(plan.requiredPlayed).toBe(1);
    expect(plan.ctx.tasks).toHaveLength(1);
  });
});

describe("the source article 004 (docs/outcome-model.md) evidence failure", () => {
  const plan = buildPlan({ tasks: requiredTasks.length, seed: 11, now });
  const planned = plan.ctx.invocations.find((p) => p.scenario === "post-dispatch evidence failure")!;
  const check = plan.ctx.checks.find((c) =>
    c.name.startsWith("source article 004 (docs/outcome-model.md) fault test"),
  )!;
  const view = (patch: Partial<InvocationView>) =>
    ({
      invocation_id: planned.invocationId,
      status: "outcome_unknown",
      next_action: "verify_operation",
      resolution: null,
      attempt_count: 1,
      last_attempt_at: new Date(now - 10 * 60_000).toISOString(),
      attempts: [{ phase: "outcome", attempt: 1, dispatch_stage: "evidence_failed", retry: { directive: "never" } }],
      ...patch,
    }) as unknown as InvocationView;

  it("is not dispatched again while Settle says verify, and its check passes", () => {
    expect(planned.followUp!(view({})).records).toEqual([]);
    expect(check.verify(new Map([[planned.invocationId, view({})]]))).toEqual([]);
  });

  it("would be dispatched again if Settle allowed a retry, and the check then fails", () => {
    const allowed = view({ status: "retry_scheduled", next_action: "wait_and_retry" });
    expect(planned.followUp!(allowed).records.map((r) => r.phase)).toEqual(["intent", "outcome"]);
    expect(check.verify(new Map([[planned.invocationId, allowed]]))).toEqual([
      'status is "retry_scheduled", expected "outcome_unknown"',
      'next_action is "wait_and_retry", expected "verify_operation"',
      "dispatches is 2, expected 1",
      "business effects is 2, expected 1",
    ]);
  });
});
