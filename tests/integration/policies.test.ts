import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as actionsRoute } from "@/app/api/v1/invocations/[invocation_id]/actions/route";
import { GET as listPoliciesRoute } from "@/app/api/v1/policies/route";
import { DELETE as deletePolicyRoute, PUT as putPolicyRoute } from "@/app/api/v1/policies/[effect_class]/route";
import { GET as queueRoute } from "@/app/api/v1/queue/route";
import { decideFor } from "@/lib/outcome/decisions";
import { putPolicy, type PolicyInput } from "@/lib/policies/policies";
import { listQueue, queueQuerySchema } from "@/lib/queue/queue";
import { applyPolicies } from "@/lib/invocations/apply-policies";
import { jobs } from "@/lib/jobs/registry";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";

// Policies with a controllable clock: overdue, then escalated by `system`;
// approvals that expire and fail closed; a quorum of two different people.

const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();
const later = (s: number) => new Date(NOW.getTime() + s * 1000);
const MIN = 60;
const HOUR = 3600;

const unknown = { title: "Gateway Timeout", status: 504 };
const approval = {
  ok: false,
  commit_state: "not_committed",
  next_action: "request_approval",
  code: "APPROVAL_REQUIRED",
  category: "authorization",
};

function record(id: string, cls: string | null, atS: number, kind: "unknown" | "approval" | { intentBudget: number }) {
  const base = {
    event_id: `${id}-e`,
    task_id: `task-${id}`,
    invocation_id: id,
    attempt: 1,
    tool: "pay",
    ...(cls ? { effect_class: cls } : {}),
    at: ago(atS),
  };
  if (typeof kind === "object") return { ...base, phase: "intent", budget_left_s: kind.intentBudget };
  return { ...base, envelope: kind === "unknown" ? unknown : approval };
}

const policy = (p: Partial<PolicyInput>): PolicyInput => ({
  overdue_after_s: null,
  escalate_after_s: null,
  approval_expires_after_s: null,
  approval_quorum: 1,
  ...p,
});

describe.each<Backend>(["postgres", "pglite"])("policies on %s", (backend) => {
  let t: TestContext;
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const queueItem = async (id: string, now: Date) =>
    (await listQueue(t.db, queueQuerySchema.parse({ limit: "200" }), { scope: {}, now })).items.find(
      (i) => i.invocation_id === id,
    );
  const systemEntries = (id: string) =>
    t.db.prisma.$queryRawUnsafe<Array<{ action: string; note: string; payload: Record<string, unknown> }>>(
      `SELECT a.action, a.note, a.payload FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid
        WHERE i.invocation_id = $1 AND a.actor = 'system' ORDER BY a.seq`,
      id,
    );

  beforeAll(async () => {
    t = await openSettle(backend);
    await putPolicy(
      t.db,
      "money",
      policy({ overdue_after_s: 30 * MIN, escalate_after_s: HOUR, approval_quorum: 2 }),
      "admin@example.com",
    );
    await putPolicy(
      t.db,
      "send",
      policy({ escalate_after_s: 30 * MIN, approval_expires_after_s: HOUR }),
      "admin@example.com",
    );
    await putPolicy(t.db, "destructive", policy({}), "admin@example.com");
    await putPolicy(t.db, "*", policy({ escalate_after_s: 2 * HOUR }), "admin@example.com");
    const res = await call(ingest, {
      key: t.key,
      body: {
        records: [
          record("sla-money", "money", 45 * MIN, "unknown"),
          record("sla-stalled", "money", 2 * HOUR, { intentBudget: 60 }),
          record("sla-off", "destructive", 5 * HOUR, "unknown"),
          record("sla-unclassified", null, 3 * HOUR, "unknown"),
          record("exp-send", "send", 50 * MIN, "approval"),
          record("quorum-money", "money", 0, "approval"),
          // Due under the default (2h) only at the race's clock, 20 minutes on.
          ...["race-1", "race-2", "race-3"].map((id) => record(id, "create", 2 * HOUR - 18 * MIN, "unknown")),
        ],
      },
    });
    expect(res.body.rejected).toBe(0);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("is a registered background job", () => {
    expect(jobs.map((j) => j.name)).toContain("policies");
  });

  it("an approval past its expiry is rejected by system, and the runtime's decision is abandon", async () => {
    // 50 minutes awaiting approval: past send's 30m escalation, but an approval with an expiry is governed by the expiry.
    await applyPolicies(t.db, NOW);
    expect(await read("exp-send")).toMatchObject({
      status: "awaiting_approval",
      sla: { escalates_at: null, expires_at: later(10 * MIN).toISOString(), overdue: false },
    });

    await applyPolicies(t.db, later(11 * MIN));
    const inv = await read("exp-send");
    expect(inv).toMatchObject({ status: "rejected", commit_state: "not_committed" });
    expect(inv.actions).toEqual([
      expect.objectContaining({
        action: "reject",
        actor: "system",
        from_status: "awaiting_approval",
        note: "Approval expired after 1h 1m without a decision (policy send: approvals expire after 1h); rejected, failing closed.",
      }),
    ]);
    expect((await systemEntries("exp-send"))[0]?.payload).toMatchObject({
      policy: "approval_expiry",
      policy_class: "send",
    });
    expect(
      decideFor(
        { status: inv.status, commitState: inv.commit_state, notBefore: inv.not_before, resolution: inv.resolution },
        later(11 * MIN),
      ).decision,
    ).toBe("abandon");
  });

  it("shows overdue before the SLA escalates it, then escalates it as system with an audit entry", async () => {
    // 25 minutes in the queue: not yet overdue (money: overdue after 30m, escalate after 1h).
    expect((await queueItem("sla-money", later(-20 * MIN)))?.sla).toMatchObject({
      policy: "money",
      overdue: false,
      escalates_at: ago(45 * MIN - HOUR),
    });
    // 45 minutes: overdue, escalates in 15 minutes — and the job leaves it alone.
    expect((await queueItem("sla-money", NOW))?.sla).toMatchObject({
      overdue: true,
      overdue_at: ago(15 * MIN),
      escalates_at: later(15 * MIN).toISOString(),
    });
    await applyPolicies(t.db, NOW);
    expect(await read("sla-money")).toMatchObject({ status: "outcome_unknown", sla: { overdue: true } });

    const run = await applyPolicies(t.db, later(16 * MIN));
    const inv = await read("sla-money");
    expect(inv.status).toBe("escalated");
    expect(inv.actions.at(-1)).toMatchObject({
      action: "escalate",
      actor: "system",
      from_status: "outcome_unknown",
      to_status: "escalated",
      note: "SLA: in the queue for 1h 1m (policy money: escalate after 1h)",
    });
    expect((await systemEntries("sla-money"))[0]?.payload).toMatchObject({
      policy: "sla",
      policy_class: "money",
      after_s: HOUR,
      waited_s: 61 * MIN,
    });
    // A stalled intent counts from when it stalled; unclassified falls to the default; `destructive` has its own row with escalation off.
    expect(await read("sla-stalled")).toMatchObject({
      status: "escalated",
      actions: [expect.objectContaining({ actor: "system", from_status: "stalled" })],
    });
    expect((await read("sla-unclassified")).actions[0].note).toMatch(
      /^SLA: in the queue for 3h( \d+m)? \(policy default: escalate after 2h\)$/,
    );
    expect(await read("sla-off")).toMatchObject({ status: "outcome_unknown", actions: [], sla: null });
    expect(run.escalated).toBeGreaterThanOrEqual(1);
    // Nothing is escalated twice.
    const again = await applyPolicies(t.db, later(17 * MIN));
    expect(await systemEntries("sla-money")).toHaveLength(1);
    expect(again.escalated).toBe(0);
  });

  it("money needs two different people: one approval keeps it waiting, the same person twice is refused", async () => {
    const ana = await createOperator(t.db, "operator", `ana-${backend}@example.com`);
    const bo = await createOperator(t.db, "operator", `bo-${backend}@example.com`);
    const approve = async (key: string) =>
      call(actionsRoute, {
        key,
        params: { invocation_id: "quorum-money" },
        body: { action: "approve", version: (await read("quorum-money")).version },
      });

    const first = await approve(ana.token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: "awaiting_approval",
      approvals: { count: 1, quorum: 2, by: [`ana-${backend}@example.com`] },
    });
    const twice = await approve(ana.token);
    expect(twice).toMatchObject({ status: 409, body: { code: "ALREADY_APPROVED" } });
    const second = await approve(bo.token);
    expect(second).toMatchObject({ status: 200, body: { status: "approved", approvals: null } });
  });

  it("several instances running the job at once escalate each invocation exactly once", async () => {
    const runs = await Promise.all([0, 1, 2].map(() => applyPolicies(t.db, later(20 * MIN))));
    expect(runs.reduce((n, r) => n + r.escalated, 0)).toBe(3);
    for (const id of ["race-1", "race-2", "race-3"]) expect(await systemEntries(id)).toHaveLength(1);
  });
});

describe("the policy API", () => {
  let t: TestContext;
  let admin: string;
  let viewer: string;
  let operator: string;
  const put = (key: string, cls: string, body: unknown) =>
    call(putPolicyRoute, { method: "PUT", key, params: { effect_class: cls }, body });

  beforeAll(async () => {
    t = await openSettle("postgres");
    admin = (await createOperator(t.db, "admin", "root@example.com")).token;
    viewer = (await createOperator(t.db, "viewer")).token;
    operator = (await createOperator(t.db, "operator")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("anyone signed in reads every class with the built-in policy before any is set", async () => {
    const res = await call(listPoliciesRoute, { key: viewer });
    expect(res.status).toBe(200);
    expect(res.body.items.map((p: { effect_class: string }) => p.effect_class)).toEqual([
      "*",
      "money",
      "destructive",
      "send",
      "create",
      "read",
    ]);
    expect(res.body.items[0]).toMatchObject({
      source: "built_in",
      approval_quorum: 1,
      escalate_after_s: null,
      updated_by: null,
    });
    expect((await call(listPoliciesRoute, { key: t.key })).status).toBe(403);
  });

  it("only admins change policies", async () => {
    const body = policy({ approval_quorum: 2 });
    expect((await put(viewer, "money", body)).body.code).toBe("FORBIDDEN");
    expect((await put(operator, "money", body)).status).toBe(403);
    expect(
      (await call(deletePolicyRoute, { method: "DELETE", key: viewer, params: { effect_class: "money" } })).status,
    ).toBe(403);
  });

  it("validates: overdue before escalation, whole seconds in range, a known class, every field", async () => {
    const bad = await put(admin, "money", policy({ overdue_after_s: 2 * HOUR, escalate_after_s: HOUR }));
    expect(bad).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(bad.body.agent_message).toContain("overdue after must be shorter than escalate after");
    expect((await put(admin, "money", policy({ escalate_after_s: 5 }))).body.agent_message).toContain(
      "at least 60 seconds",
    );
    expect((await put(admin, "money", policy({ approval_quorum: 0 }))).status).toBe(400);
    expect((await put(admin, "refunds", policy({}))).status).toBe(400);
    expect((await put(admin, "money", { approval_quorum: 2 })).status).toBe(400);
  });

  it("saves a class's own row with who and when, records the change, and deleting puts it back on the default", async () => {
    await put(admin, "*", policy({ overdue_after_s: 10 * MIN, escalate_after_s: HOUR }));
    const saved = await put(
      admin,
      "money",
      policy({
        overdue_after_s: 15 * MIN,
        escalate_after_s: 2 * HOUR,
        approval_expires_after_s: 4 * HOUR,
        approval_quorum: 2,
      }),
    );
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      effect_class: "money",
      source: "own",
      approval_quorum: 2,
      escalate_after_s: 2 * HOUR,
      updated_by: "root@example.com",
    });

    const list = (await call(listPoliciesRoute, { key: viewer })).body;
    expect(list.items.find((p: { effect_class: string }) => p.effect_class === "send")).toMatchObject({
      source: "default",
      escalate_after_s: HOUR,
      approval_quorum: 1,
    });
    expect(list.changes[0]).toMatchObject({
      effect_class: "money",
      actor: "root@example.com",
      before: null,
      after: { approval_quorum: 2 },
    });

    const removed = await call(deletePolicyRoute, { method: "DELETE", key: admin, params: { effect_class: "money" } });
    expect(removed.body).toMatchObject({
      effect_class: "money",
      source: "default",
      approval_quorum: 1,
      escalate_after_s: HOUR,
    });
    expect((await call(listPoliciesRoute, { key: viewer })).body.changes[0]).toMatchObject({
      effect_class: "money",
      before: { approval_quorum: 2 },
      after: null,
    });
    expect(
      (await call(deletePolicyRoute, { method: "DELETE", key: admin, params: { effect_class: "money" } })).status,
    ).toBe(404);
  });

  it("the duplicate window: built in per class, validated, kept when a body leaves it out, in the history", async () => {
    const windows = async () =>
      Object.fromEntries(
        (
          (await call(listPoliciesRoute, { key: viewer })).body.items as Array<{
            effect_class: string;
            duplicate_window_s: number | null;
          }>
        ).map((p) => [p.effect_class, p.duplicate_window_s]),
      );
    // `*` was set by the test before (without a window): classes without a row of their own take its null.
    expect(await windows()).toMatchObject({ "*": null, money: null, send: null });
    await call(deletePolicyRoute, { method: "DELETE", key: admin, params: { effect_class: "*" } });
    expect(await windows()).toEqual({
      "*": null,
      money: 86_400,
      destructive: 86_400,
      send: 3_600,
      create: null,
      read: null,
    });

    expect((await put(admin, "send", policy({ duplicate_window_s: 30 }))).body.agent_message).toContain(
      "at least 60 seconds",
    );
    const saved = await put(admin, "send", policy({ duplicate_window_s: 2 * HOUR }));
    expect(saved.body).toMatchObject({ effect_class: "send", source: "own", duplicate_window_s: 2 * HOUR });
    // A body from a client that does not know the field keeps the window in effect.
    expect((await put(admin, "send", policy({ overdue_after_s: 10 * MIN }))).body).toMatchObject({
      duplicate_window_s: 2 * HOUR,
      overdue_after_s: 10 * MIN,
    });
    // A new row without it takes the class's built-in window; null switches it off.
    expect((await put(admin, "destructive", policy({}))).body).toMatchObject({
      source: "own",
      duplicate_window_s: 86_400,
    });
    expect((await put(admin, "destructive", policy({ duplicate_window_s: null }))).body).toMatchObject({
      duplicate_window_s: null,
    });
    const changes = (await call(listPoliciesRoute, { key: viewer })).body.changes;
    expect(changes[0]).toMatchObject({
      effect_class: "destructive",
      before: { duplicate_window_s: 86_400 },
      after: { duplicate_window_s: null },
    });
    await call(deletePolicyRoute, { method: "DELETE", key: admin, params: { effect_class: "send" } });
    await call(deletePolicyRoute, { method: "DELETE", key: admin, params: { effect_class: "destructive" } });
    await put(admin, "*", policy({ overdue_after_s: 10 * MIN, escalate_after_s: HOUR }));
  });

  it("the queue API carries the SLA of each item", async () => {
    await call(ingest, { key: t.key, body: record("api-sla", "create", 20 * MIN, "unknown") });
    const res = await call(queueRoute, { key: viewer, path: "/api/v1/queue" });
    const item = res.body.items.find((i: { invocation_id: string }) => i.invocation_id === "api-sla");
    expect(item.sla).toMatchObject({ policy: "*", overdue: true, overdue_at: ago(10 * MIN) });
    expect(Date.parse(item.sla.escalates_at)).toBe(NOW.getTime() + 40 * MIN * 1000);
  });
});
