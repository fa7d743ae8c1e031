import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as act } from "@/app/api/v1/invocations/[invocation_id]/actions/route";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { findInvocation } from "@/lib/invocations/read";
import { findTaskTimeline } from "@/lib/invocations/task-page";
import { buildTimeline, type TimelineEvent } from "@/lib/invocations/timeline-builder";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getInvocation, getTask, ingest } from "./routes";

// The timeline pages' story, built from what the read API answers, for the
// stories an operator meets most: source article 002 (docs/outcome-model.md) fixture 1 settled by a probe after
// an operator asked for it, a retry after "not committed", and a stalled intent.

const base = Date.parse("2026-11-29T05:12:00.000Z");
const at = (s: number) => new Date(base + s * 1000).toISOString();

function story(events: TimelineEvent[]): string[] {
  return events.map((e) => {
    if (e.kind === "record")
      return `${e.phase}#${e.attempt}${e.retry_of ? ` retry-of#${e.retry_of}` : ""} ${e.record.commit_state}`;
    if (e.kind === "gap") return `gap:${e.gap}${e.open ? " open" : ""}`;
    if (e.kind === "action")
      return `${e.entry.action} by ${e.entry.actor}: ${e.entry.from_status}->${e.entry.to_status}`;
    return `marker:${e.marker}`;
  });
}

describe("timelines through the read API", () => {
  let t: TestContext;
  let operator: Awaited<ReturnType<typeof createOperator>>;
  const send = async (key: string, ...records: object[]) => {
    const res = await call(ingest, { key, body: { records } });
    expect(res.body.rejected).toBe(0);
  };
  const read = async (id: string, query = "", key = t.key) =>
    call(getInvocation, {
      key,
      params: { invocation_id: id },
      path: `/api/v1/invocations/${encodeURIComponent(id)}${query}`,
    });

  beforeAll(async () => {
    t = await openSettle("postgres");
    operator = await createOperator(t.db, "operator", "ana@example.com");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("source article 002 (docs/outcome-model.md) fixture 1: intent, unknown outcome, verification requested, probe found → reconciled", async () => {
    const r = {
      task_id: "ord-7741",
      invocation_id: "f1",
      tool: "create_order",
      effect_class: "create",
      idempotency_key: "9c1f",
    };
    const started = Date.now() - 30_000;
    await send(
      t.key,
      { ...r, event_id: "f1-i1", attempt: 1, phase: "intent", at: new Date(started).toISOString(), budget_left_s: 42 },
      {
        ...r,
        event_id: "f1-o1",
        attempt: 1,
        at: new Date(started + 8000).toISOString(),
        envelope: { content: [{ type: "text", text: "connection reset by peer" }], isError: true },
      },
    );
    const before = (await read("f1")).body;
    const asked = await call(act, {
      key: operator.token,
      params: { invocation_id: "f1" },
      path: "/api/v1/invocations/f1/actions",
      body: { action: "request_verification", version: before.version, note: "please probe" },
    });
    expect(asked.status).toBe(200);
    const probedAt = Date.now() + 5;
    await send(t.key, {
      ...r,
      event_id: "f1-p1",
      attempt: 1,
      phase: "probe",
      at: new Date(probedAt).toISOString(),
      envelope: { ok: true, commit_state: "committed", operation_ref: "9c1f" },
    });

    const inv = (await read("f1")).body;
    expect(inv).toMatchObject({ status: "reconciled", resolution: { by: "probe", commit_state: "committed" } });
    const timeline = buildTimeline([inv], { now: new Date(probedAt + 1000), stallWindowS: 300 });
    expect(story(timeline.events)).toEqual([
      "intent#1 unknown",
      "gap:awaiting_outcome",
      "outcome#1 unknown",
      "gap:unsettled",
      "request_verification by ana@example.com: outcome_unknown->verifying",
      "probe#1 committed",
    ]);
    // The intent's budget (42 s) is its stall window; the outcome came well within it.
    expect(timeline.events[1]).toMatchObject({ ms: 8000, stall_at: new Date(started + 42_000).toISOString() });
    const outcome = timeline.events.find((e) => e.kind === "record" && e.phase === "outcome");
    expect(outcome).toMatchObject({
      record: { dialect: "mcp", next_action: "verify_operation", commit_state: "unknown" },
    });
    expect(timeline.events.some((e) => e.kind === "marker")).toBe(false);
  });

  it("a retry after not committed: the second attempt is a retry of the first, after a visible pause", async () => {
    const r = {
      task_id: "ord-20",
      invocation_id: "retry-1",
      tool: "charge_card",
      effect_class: "money",
      idempotency_key: "ch-20",
    };
    await send(
      t.key,
      { ...r, event_id: "r-i1", attempt: 1, phase: "intent", at: at(0) },
      {
        ...r,
        event_id: "r-o1",
        attempt: 1,
        at: at(1),
        envelope: { type: "about:blank", title: "Too Many Requests", status: 429, retry_after: 30 },
      },
      { ...r, event_id: "r-i2", attempt: 2, phase: "intent", at: at(31) },
      { ...r, event_id: "r-o2", attempt: 2, at: at(33), envelope: { ok: true, commit_state: "committed" } },
    );
    const inv = (await read("retry-1")).body;
    expect(inv.status).toBe("succeeded");
    const timeline = buildTimeline([inv], { now: new Date(base + 60_000), stallWindowS: 300 });
    expect(story(timeline.events)).toEqual([
      "intent#1 unknown",
      "gap:awaiting_outcome",
      "outcome#1 not_committed",
      "gap:before_retry",
      "intent#2 retry-of#1 unknown",
      "gap:awaiting_outcome",
      "outcome#2 committed",
    ]);
    expect(timeline.events[3]).toMatchObject({ ms: 30_000, attempt: 2 });
  });

  it("a stalled intent: the gap is still open and the marker sits at the stall time Settle computed", async () => {
    const started = Date.now() - 10_000;
    await send(t.key, {
      event_id: "st-1",
      task_id: "ord-30",
      invocation_id: "stall-1",
      tool: "send_sms",
      effect_class: "send",
      phase: "intent",
      at: new Date(started).toISOString(),
      budget_left_s: 5,
    });
    const inv = (await read("stall-1")).body;
    expect(inv).toMatchObject({ status: "stalled", stall_at: new Date(started + 5000).toISOString() });
    const timeline = buildTimeline([inv], { now: new Date(), stallWindowS: 300 });
    expect(story(timeline.events)).toEqual(["intent#1 unknown", "gap:no_outcome open", "marker:stalled"]);
    expect(timeline.events[2]).toMatchObject({ at: inv.stall_at, window_s: 5 });
  });

  it("the task reader returns every invocation exactly as the read API does, in one go", async () => {
    await send(t.key, {
      event_id: "f1b-o",
      task_id: "ord-7741",
      invocation_id: "f1b",
      tool: "send_email",
      effect_class: "send",
      at: new Date().toISOString(),
      envelope: { outcome: "ok", effect_applied: "yes" },
    });
    const found = await findTaskTimeline(t.db, {}, "ord-7741");
    expect(found.kind).toBe("found");
    if (found.kind !== "found") return;
    expect(found.value.invocations.map((i) => i.invocation_id)).toEqual(["f1", "f1b"]);
    for (const inv of found.value.invocations) expect(inv).toEqual((await read(inv.invocation_id)).body);
    const task = await call(getTask, { key: t.key, params: { task_id: "ord-7741" }, path: "/api/v1/tasks/ord-7741" });
    expect(found.value.task).toEqual(task.body);

    // The task page's light read leaves out only what it does not show.
    const light = await findTaskTimeline(t.db, {}, "ord-7741", undefined, new Date(), true);
    if (light.kind !== "found") throw new Error("not found");
    const outcome = light.value.invocations[0]!.attempts[1]!;
    expect(outcome).toEqual({
      ...found.value.invocations[0]!.attempts[1],
      envelope: null,
      safe_details: {},
      agent_message: null,
    });
    expect(found.value.invocations[0]!.attempts[1]!.envelope).not.toBeNull();
  });

  it("the same id in two runtimes: the page asks which, `runtime` picks one, and a runtime key never sees another's", async () => {
    const other = await createRuntimeKey(t.db, "rt-other");
    await send(t.key, {
      event_id: "dup-a",
      task_id: "shared-task",
      invocation_id: "shared",
      tool: "tool_a",
      at: at(0),
      envelope: { ok: true, commit_state: "committed" },
    });
    await send(other.key, {
      event_id: "dup-b",
      task_id: "shared-task",
      invocation_id: "shared",
      tool: "tool_b",
      at: at(0),
      envelope: { ok: true, commit_state: "committed" },
    });

    expect(await findInvocation(t.db, {}, "shared")).toEqual({ kind: "ambiguous", runtimes: ["rt-other", "rt-test"] });
    expect(await findTaskTimeline(t.db, {}, "shared-task")).toEqual({
      kind: "ambiguous",
      runtimes: ["rt-other", "rt-test"],
    });
    const picked = await findInvocation(t.db, {}, "shared", { runtime: "rt-other" });
    expect(picked.kind === "found" && picked.value.tool).toBe("tool_b");
    const task = await findTaskTimeline(t.db, {}, "shared-task", "rt-test");
    expect(task.kind === "found" && task.value.invocations.map((i) => i.tool)).toEqual(["tool_a"]);

    const byToken = await read("shared", "?runtime=rt-other", operator.token);
    expect(byToken.body).toMatchObject({ runtime: "rt-other", tool: "tool_b" });
    const taskByToken = await call(getTask, {
      key: operator.token,
      params: { task_id: "shared-task" },
      path: "/api/v1/tasks/shared-task?runtime=rt-test",
    });
    expect(taskByToken.body.invocations.map((i: { tool: string }) => i.tool)).toEqual(["tool_a"]);

    const foreign = await read("shared", "?runtime=rt-other", t.key);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ ok: false, code: "NOT_FOUND" });
    expect((await read("shared", "?runtime=no-such-runtime", operator.token)).status).toBe(404);
    expect((await findInvocation(t.db, {}, "nothing-here")).kind).toBe("missing");
  });
});
