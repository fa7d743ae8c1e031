import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as casesGet } from "@/app/api/v1/metrics/cases/route";
import { GET as metricsGet } from "@/app/api/v1/metrics/route";
import type { OperatorAction } from "@/lib/outcome/actions";
import { guardWrite } from "@/lib/guard/guard";
import { actOnInvocation } from "@/lib/invocations/act";
import { putPolicy } from "@/lib/policies/policies";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { runJobsOnce } from "@/lib/jobs/scheduler";
import { sampleQueue } from "@/lib/metrics/queue-samples";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

// A small known history, then every number of GET /api/v1/metrics asserted:
// ranges are [from, to), tool and runtime filters narrow, a case list names
// the invocations behind each number, and only managers and admins may read.

const T = Date.parse("2026-11-20T10:00:00Z");
const at = (minutes: number) => new Date(T + minutes * 60_000).toISOString();
const ok = { outcome: "ok", effect_applied: "yes" };
const unknown = { outcome: "unknown", effect_applied: "unknown", message: "connection reset after send" };
const retryable = { outcome: "retryable", effect_applied: "no", message: "rate limited" };
const needsApproval = {
  ok: false,
  code: "APPROVAL_REQUIRED",
  category: "authorization",
  commit_state: "not_committed",
  next_action: "request_approval",
  retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
  operation_ref: "r",
  safe_details: {},
  agent_message: "ask",
  user_message: "ask",
};

type Rec = {
  id: string;
  tool: string;
  effect: string;
  key: string;
  attempt?: number;
  phase?: string;
  minute: number;
  envelope?: unknown;
  task?: string;
  budget?: number;
};

describe.each<Backend>(["postgres", "pglite"])("trust metrics on %s", (backend) => {
  let t: TestContext;
  let otherKey: string;
  let manager: string;
  const range = { from: at(0), to: at(120) };

  async function send(key: string, records: Rec[]) {
    const body = {
      records: records.map((r) => ({
        event_id: `${r.id}-${r.phase ?? "outcome"}-${r.attempt ?? 1}`,
        task_id: r.task ?? `task-${r.id}`,
        invocation_id: r.id,
        attempt: r.attempt ?? 1,
        tool: r.tool,
        effect_class: r.effect,
        idempotency_key: r.key,
        phase: r.phase ?? "outcome",
        at: at(r.minute),
        ...(r.budget !== undefined ? { budget_left_s: r.budget } : {}),
        ...(r.envelope ? { envelope: r.envelope } : {}),
      })),
    };
    const res = await call(ingest, { key, body });
    expect(res.body.rejected).toBe(0);
  }

  async function act(invocationId: string, action: OperatorAction, actor: string, minute: number) {
    const current = await t.db.prisma.invocation.findFirstOrThrow({ where: { invocationId } });
    const outcome = await actOnInvocation(t.db, { invocationId }, action, {
      actor,
      version: current.version,
      now: new Date(at(minute)),
    });
    expect(outcome.ok).toBe(true);
  }

  async function metrics(query: Record<string, string>, token = manager) {
    return call(metricsGet, { key: token, path: `/api/v1/metrics?${new URLSearchParams(query)}` });
  }

  async function cases(metric: string, query: Record<string, string> = range) {
    const res = await call(casesGet, {
      key: manager,
      path: `/api/v1/metrics/cases?${new URLSearchParams({ ...query, metric })}`,
    });
    expect(res.status).toBe(200);
    return (res.body.items as Array<{ invocation_id: string }>).map((c) => c.invocation_id).sort();
  }

  beforeAll(async () => {
    t = await openSettle(backend);
    otherKey = (await createRuntimeKey(t.db, "rt-other")).key;
    manager = (await createOperator(t.db, "manager")).token;
    await send(t.key, [
      { id: "inv-ok", tool: "create_invoice", effect: "create", key: "k-ok", phase: "intent", minute: 0 },
      { id: "inv-ok", tool: "create_invoice", effect: "create", key: "k-ok", minute: 1, envelope: ok },
      { id: "inv-retry", tool: "create_invoice", effect: "create", key: "k-retry", minute: 0, envelope: retryable },
      {
        id: "inv-retry",
        tool: "create_invoice",
        effect: "create",
        key: "k-retry",
        attempt: 2,
        minute: 2,
        envelope: ok,
      },
      // Seed 002 fixture 2: the same key twice, one effect, two ok returns.
      { id: "inv-replay", tool: "send_email", effect: "send", key: "k-replay", minute: 0, envelope: ok },
      { id: "inv-replay", tool: "send_email", effect: "send", key: "k-replay", attempt: 2, minute: 5, envelope: ok },
      { id: "inv-probe", tool: "charge_card", effect: "money", key: "k-probe", minute: 10, envelope: unknown },
      {
        id: "inv-probe",
        tool: "charge_card",
        effect: "money",
        key: "k-probe",
        phase: "probe",
        minute: 20,
        envelope: { ok: true, commit_state: "committed", operation_ref: "k-probe" },
      },
      { id: "inv-op", tool: "charge_card", effect: "money", key: "k-op", minute: 10, envelope: unknown },
      { id: "inv-esc", tool: "charge_card", effect: "money", key: "k-esc", minute: 30, envelope: unknown },
      { id: "inv-open", tool: "delete_record", effect: "destructive", key: "k-open", minute: 50, envelope: unknown },
      { id: "inv-sla", tool: "send_sms", effect: "send", key: "k-sla", minute: 50, envelope: unknown },
      { id: "inv-appr", tool: "refund_payment", effect: "money", key: "k-appr", minute: 0, envelope: needsApproval },
      {
        id: "inv-dup-1",
        tool: "create_ticket",
        effect: "create",
        key: "k-dup",
        minute: 60,
        envelope: ok,
        task: "task-dup-1",
      },
      {
        id: "inv-dup-2",
        tool: "create_ticket",
        effect: "create",
        key: "k-dup",
        minute: 70,
        envelope: ok,
        task: "task-dup-2",
      },
      {
        id: "inv-stall",
        tool: "create_ticket",
        effect: "create",
        key: "k-stall",
        phase: "intent",
        minute: 0,
        budget: 60,
      },
      // Outside the range: before `from`, and exactly at `to`.
      { id: "inv-early", tool: "charge_card", effect: "money", key: "k-early", minute: -5, envelope: unknown },
      { id: "inv-late", tool: "charge_card", effect: "money", key: "k-late", minute: 120, envelope: unknown },
    ]);
    await send(otherKey, [
      { id: "inv-x", tool: "charge_card", effect: "money", key: "k-x", minute: 10, envelope: unknown },
    ]);

    await act("inv-appr", { action: "approve" }, "ana@example.com", 15);
    await act(
      "inv-op",
      { action: "mark_reconciled", commit_state: "committed", note: "found in the ledger" },
      "ana@example.com",
      40,
    );
    await act("inv-esc", { action: "escalate", note: "no access to the ledger" }, "ana@example.com", 35);

    const runtime = await t.db.prisma.runtime.findUniqueOrThrow({ where: { name: t.runtime } });
    const guard = (key: string, minute: number) =>
      guardWrite(
        t.db,
        runtime,
        { task_id: `task-g-${key}`, tool: "create_ticket", idempotency_key: key },
        new Date(at(minute)),
      );
    expect(await guard("k-dup", 80)).toMatchObject({ allow: false, reason: "already_committed" });
    expect(await guard("k-open", 81)).toMatchObject({ allow: false, reason: "outcome_unknown" });
    // Allowed (after the range): not a duplicate prevented, and its write-ahead intent is outside the range.
    expect(await guard("k-new", 125)).toMatchObject({ allow: true });

    // The SLA policy for `send`: inv-sla (unknown since minute 50) escalates when the jobs run at minute 65.
    await putPolicy(
      t.db,
      "send",
      { overdue_after_s: 300, escalate_after_s: 600, approval_expires_after_s: null, approval_quorum: 1 },
      "admin@example.com",
      new Date(at(0)),
    );
    await runJobsOnce(t.db, new Date(at(65)));
    await sampleQueue(t.db, new Date(at(66)));
  });

  afterAll(async () => {
    await t?.teardown();
  });

  it("counts every number docs/outcome-model.md §6 names over [from, to)", async () => {
    const res = await metrics(range);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from: "2026-11-20T10:00:00.000Z",
      to: "2026-11-20T12:00:00.000Z",
      duplicates_prevented: { total: 4, guard_denials: 2, probe_found: 1, receiver_replays: 1 },
      possible_duplicate_effects: 1,
      // probe (inv-probe), operator (inv-op), escalated (inv-esc, inv-sla by policy), open (inv-open, inv-stall, inv-x)
      unknown_outcomes: { total: 7, resolved_by_probe: 1, resolved_by_operator: 1, escalated: 2, open: 3 },
      pending_recovery_seconds: { p50: 1200, p90: 1680 },
      escalations_by_tool: { charge_card: 1, send_sms: 1 },
      // 13 invocations first seen in range, 15 transport attempts
      retries_per_invocation: 0.154,
      invocations: 13,
      approval_wait_seconds: { p50: 900, p90: 900 },
      sla_breaches: 1,
      bucket: "hour",
    });
    expect(res.body.series).toHaveLength(2);
    expect(res.body.series[0]).toMatchObject({
      at: "2026-11-20T10:00:00.000Z",
      receiver_replays: 1,
      probe_found: 1,
      unknown_outcomes: 7,
      escalations: 1,
    });
    expect(res.body.series[1]).toMatchObject({
      at: "2026-11-20T11:00:00.000Z",
      guard_denials: 2,
      queue_size_max: 7,
      sla_breaches: 1,
      escalations: 1,
    });
    const card = res.body.by_tool.find((r: { tool: string }) => r.tool === "charge_card");
    expect(card).toMatchObject({
      unknown_outcomes: 4,
      resolved_by_probe: 1,
      resolved_by_operator: 1,
      escalated: 1,
      open: 1,
      probe_found: 1,
      escalations: 1,
    });
  });

  it("lists the invocations behind each number", async () => {
    // A denial names the invocation that blocked the write: the key's latest committed one.
    expect(await cases("guard_denials")).toEqual(["inv-dup-2", "inv-open"]);
    expect(await cases("duplicates_prevented")).toEqual(["inv-dup-2", "inv-open", "inv-probe", "inv-replay"]);
    expect(await cases("possible_duplicate_effects")).toEqual(["inv-dup-1", "inv-dup-2"]);
    expect(await cases("unknown_outcomes")).toEqual([
      "inv-esc",
      "inv-op",
      "inv-open",
      "inv-probe",
      "inv-sla",
      "inv-stall",
      "inv-x",
    ]);
    expect(await cases("open")).toEqual(["inv-open", "inv-stall", "inv-x"]);
    expect(await cases("escalated")).toEqual(["inv-esc", "inv-sla"]);
    expect(await cases("pending_recovery")).toEqual(["inv-op", "inv-probe"]);
    expect(await cases("retries")).toEqual(["inv-replay", "inv-retry"]);
    expect(await cases("approval_wait")).toEqual(["inv-appr"]);
    expect(await cases("sla_breaches")).toEqual(["inv-sla"]);
    const page = await call(casesGet, {
      key: manager,
      path: `/api/v1/metrics/cases?${new URLSearchParams({ ...range, metric: "unknown_outcomes", limit: "5" })}`,
    });
    expect(page.body.items).toHaveLength(5);
    expect(page.body.next_cursor).toBe("5");
  });

  it("counts from inclusive, to exclusive, with how each unknown stood at `to`", async () => {
    const res = await metrics({ from: at(10), to: at(30) });
    // inv-probe and inv-op entered at minute 10 (from, included), inv-x too; inv-esc at 30 (= to) is not.
    // At minute 30 the probe had settled inv-probe; inv-op was still open (reconciled at 40).
    expect(res.body.unknown_outcomes).toEqual({
      total: 3,
      resolved_by_probe: 1,
      resolved_by_verifier: 0,
      resolved_by_operator: 0,
      escalated: 0,
      open: 2,
      settled_without_a_person: 0.333,
    });
    expect(res.body.pending_recovery_seconds).toEqual({ p50: 600, p90: 600 });
    expect(res.body.duplicates_prevented).toEqual({ total: 1, guard_denials: 0, probe_found: 1, receiver_replays: 0 });
    expect(res.body.bucket).toBe("hour");
  });

  it("narrows by tool and by runtime", async () => {
    const card = await metrics({ ...range, tool: "charge_card" });
    expect(card.body.unknown_outcomes).toEqual({
      total: 4,
      resolved_by_probe: 1,
      resolved_by_verifier: 0,
      resolved_by_operator: 1,
      escalated: 1,
      open: 1,
      settled_without_a_person: 0.25,
    });
    expect(card.body.escalations_by_tool).toEqual({ charge_card: 1 });
    expect(card.body.invocations).toBe(4);
    const own = await metrics({ ...range, runtime: t.runtime });
    expect(own.body.unknown_outcomes.total).toBe(6);
    expect(own.body.invocations).toBe(12);
    const other = await metrics({ ...range, runtime: "rt-other", tool: "charge_card" });
    expect(other.body).toMatchObject({
      unknown_outcomes: { total: 1, open: 1 },
      invocations: 1,
      duplicates_prevented: { total: 0 },
    });
    expect((await metrics({ ...range, runtime: "nobody" })).status).toBe(404);
  });

  it("exports CSV: one row per tool and one for all tools", async () => {
    const res = await metrics({ ...range, format: "csv" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    const lines = String(res.body).trimEnd().split("\r\n");
    expect(lines[0]).toMatch(/^from,to,tool,duplicates_prevented,guard_denials,/);
    const all = lines.at(-1)!.split(",");
    expect(all.slice(2, 7)).toEqual(["(all tools)", "4", "2", "1", "1"]);
    expect(lines).toHaveLength(1 + 7 + 1);
  });

  it("answers managers and admins only, and refuses a range that is not one", async () => {
    for (const role of ["viewer", "operator"] as const) {
      const { token } = await createOperator(t.db, role);
      expect((await metrics(range, token)).status).toBe(403);
    }
    expect((await metrics(range, (await createOperator(t.db, "admin")).token)).status).toBe(200);
    expect((await metrics(range, t.key)).status).toBe(403);
    expect((await metrics({ from: at(30), to: at(10) })).body.code).toBe("INVALID_REQUEST");
    expect((await metrics({ from: "yesterday" })).status).toBe(400);
  });

  it("samples the queue once per minute, whichever instance runs the job", async () => {
    expect(await sampleQueue(t.db, new Date(at(66)))).toBe(0);
    const rows = await t.db.prisma.queueSample.findMany({ where: { at: new Date(at(66)) } });
    expect(rows.map((r) => r.size).sort()).toEqual([1, 6]);
  });
});
