import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaPg } from "@prisma/adapter-pg";
import { createPostgresDriver } from "@/lib/db/driver";
import { PrismaClient } from "@/lib/db/generated/client";
import type { Db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { actOnInvocation } from "@/lib/invocations/act";
import { guardWrite } from "@/lib/guard/guard";
import type { OperatorAction } from "@/lib/outcome/actions";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, getTask, guard, ingest } from "./routes";

// POST /api/v1/guard (docs/outcome-model.md §5): the table of lib/outcome/guard-rules.ts through
// the API and the database, the intent it writes ahead, guard_checks, and
// exactly one allowed call among many concurrent ones.

const iso = (offsetS: number) => new Date(Date.now() + offsetS * 1000).toISOString();

describe.each<Backend>(["postgres", "pglite"])("guard on %s", (backend) => {
  let t: TestContext;
  let n = 0;
  const fresh = () => `k${(n += 1)}-${backend}`;
  const ask = (body: Record<string, unknown>, key = t.key) => call(guard, { key, path: "/api/v1/guard", body });
  const askFor = (task: string, idempotencyKey: string, extra: Record<string, unknown> = {}) =>
    ask({ task_id: task, tool: "create_invoice", idempotency_key: idempotencyKey, effect_class: "create", ...extra });
  const send = async (records: object[]) =>
    expect((await call(ingest, { key: t.key, body: { records } })).body.rejected).toBe(0);
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const act = async (id: string, action: OperatorAction, actor = "ana@example.com") => {
    const done = await actOnInvocation(t.db, { invocationId: id }, action, {
      actor,
      version: (await read(id)).version,
    });
    expect(done.ok).toBe(true);
  };
  const outcome = (id: string, task: string, key: string, envelope: object, attempt = 1) =>
    send([
      {
        event_id: `${id}:a${attempt}:outcome`,
        task_id: task,
        invocation_id: id,
        attempt,
        tool: "create_invoice",
        effect_class: "create",
        idempotency_key: key,
        at: iso(-5),
        envelope,
      },
    ]);
  const checks = (key: string) =>
    t.db.prisma.guardCheck.findMany({
      where: { idempotencyKey: key },
      orderBy: { at: "asc" },
      select: { allow: true, reason: true, invocationId: true },
    });

  /** A guarded write whose outcome came back with `envelope`: the invocation it made. */
  async function guardedWith(envelope: object) {
    const key = fresh();
    const first = await askFor("t-1", key, { at: iso(-10) });
    expect(first.body.allow).toBe(true);
    await outcome(first.body.invocation_id, "t-1", key, envelope);
    return { key, id: first.body.invocation_id as string };
  }

  beforeAll(async () => {
    t = await openSettle(backend);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("allows a new key and writes the intent ahead through ingest: the invocation is pending, attempt 1", async () => {
    const key = fresh();
    const res = await askFor("t-1", key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ allow: true, reason: null, invocation_id: `t-1:${key}` });
    const inv = await read(`t-1:${key}`);
    expect(inv).toMatchObject({
      status: "pending",
      commit_state: "unknown",
      idempotency_key: key,
      effect_class: "create",
      attempt_count: 1,
      version: 1,
    });
    expect(inv.stall_at).not.toBeNull();
    expect(inv.attempts).toEqual([
      expect.objectContaining({
        phase: "intent",
        attempt: 1,
        dialect: "settle",
        dispatch_stage: "pre_dispatch",
        outcome: "unknown",
        event_id: expect.stringMatching(/^guard:/),
      }),
    ]);
    expect(await checks(key)).toEqual([{ allow: true, reason: null, invocationId: `t-1:${key}` }]);
  });

  it("denies while the intent is in flight, and names the invocation it belongs to", async () => {
    const key = fresh();
    const id = (await askFor("t-1", key)).body.invocation_id;
    expect((await askFor("t-1", key)).body).toMatchObject({ allow: false, reason: "in_flight", invocation_id: id });
    expect((await askFor("t-1", key, { invocation_id: id })).body).toMatchObject({
      allow: false,
      reason: "in_flight",
      invocation_id: id,
    });
    // Another task, another invocation id: still the same business key.
    expect((await askFor("t-2", key, { invocation_id: "other" })).body).toMatchObject({
      allow: false,
      reason: "in_flight",
      invocation_id: id,
    });
    expect(await checks(key)).toEqual([
      { allow: true, reason: null, invocationId: id },
      { allow: false, reason: "in_flight", invocationId: id },
      { allow: false, reason: "in_flight", invocationId: id },
      { allow: false, reason: "in_flight", invocationId: id },
    ]);
  });

  it("denies already_committed after a committed outcome, a probe that found it, or an operator's reconciliation", async () => {
    const byOutcome = await guardedWith({ ok: true, commit_state: "committed" });
    expect((await askFor("t-1", byOutcome.key)).body).toMatchObject({
      allow: false,
      reason: "already_committed",
      invocation_id: byOutcome.id,
    });

    const byProbe = await guardedWith({ ok: false, commit_state: "unknown" });
    await send([
      {
        event_id: `${byProbe.id}:probe`,
        task_id: "t-1",
        invocation_id: byProbe.id,
        attempt: 1,
        phase: "probe",
        tool: "create_invoice",
        at: iso(-1),
        envelope: { ok: true, commit_state: "committed" },
      },
    ]);
    expect((await askFor("t-9", byProbe.key)).body).toMatchObject({
      allow: false,
      reason: "already_committed",
      invocation_id: byProbe.id,
    });

    const byOperator = await guardedWith({ ok: false, commit_state: "unknown" });
    await act(byOperator.id, { action: "mark_reconciled", commit_state: "committed", note: "invoice INV-9 exists" });
    expect((await askFor("t-1", byOperator.key)).body).toMatchObject({
      allow: false,
      reason: "already_committed",
      invocation_id: byOperator.id,
    });
  });

  it("the invocation and its task show the guard's refusals: the refused duplicate of a committed call, by reason", async () => {
    const task = `t-shown-${backend}`;
    const key = fresh();
    const first = await askFor(task, key, { at: iso(-10) });
    await outcome(first.body.invocation_id, task, key, { ok: true, commit_state: "committed" });
    for (let i = 0; i < 2; i += 1) expect((await askFor(task, key)).body.allow).toBe(false);
    const shown = await read(first.body.invocation_id);
    expect(shown.guard_refusals).toEqual([
      { reason: "already_committed", task_id: task, idempotency_key: key, refused: 2, last_at: expect.any(String) },
    ]);
    const taskView = (await call(getTask, { key: t.key, params: { task_id: task } })).body;
    expect(taskView.guard_refusals).toEqual([
      {
        reason: "already_committed",
        invocation_id: first.body.invocation_id,
        idempotency_key: key,
        refused: 2,
        last_at: shown.guard_refusals[0].last_at,
      },
    ]);
  });

  it("denies outcome_unknown while the outcome is unknown, partial, stalled, being verified or escalated", async () => {
    const unknown = await guardedWith({ title: "Gateway Timeout", status: 504 });
    expect((await read(unknown.id)).status).toBe("outcome_unknown");
    expect((await askFor("t-1", unknown.key)).body).toMatchObject({
      allow: false,
      reason: "outcome_unknown",
      invocation_id: unknown.id,
    });

    const partial = await guardedWith({
      outcome: "ok",
      effect_applied: "partial",
      items: [
        { item_id: "a", applied: "yes" },
        { item_id: "b", applied: "unknown" },
      ],
    });
    expect((await read(partial.id)).status).toBe("partially_applied");
    expect((await askFor("t-1", partial.key)).body.reason).toBe("outcome_unknown");

    await act(unknown.id, { action: "request_verification" });
    expect((await askFor("t-1", unknown.key)).body.reason).toBe("outcome_unknown");
    await act(unknown.id, { action: "escalate", note: "provider down" });
    expect((await askFor("t-1", unknown.key)).body.reason).toBe("outcome_unknown");

    const stalledKey = fresh();
    await send([
      {
        event_id: `st-${stalledKey}`,
        task_id: "t-1",
        invocation_id: `st-${stalledKey}`,
        attempt: 1,
        phase: "intent",
        tool: "create_invoice",
        idempotency_key: stalledKey,
        budget_left_s: 1,
        at: iso(-60),
      },
    ]);
    expect((await read(`st-${stalledKey}`)).status).toBe("stalled");
    expect((await askFor("t-1", stalledKey)).body).toMatchObject({
      allow: false,
      reason: "outcome_unknown",
      invocation_id: `st-${stalledKey}`,
    });
  });

  it("allows the next attempt of the same invocation once it is settled as not committed", async () => {
    const settled = await guardedWith({ ok: false, commit_state: "unknown" });
    await act(settled.id, {
      action: "mark_reconciled",
      commit_state: "not_committed",
      note: "no invoice in the ledger",
    });
    expect((await askFor("t-1", settled.key)).body).toMatchObject({
      allow: true,
      reason: null,
      invocation_id: settled.id,
    });
    const inv = await read(settled.id);
    expect(inv.status).toBe("pending");
    expect(
      inv.attempts.filter((a: { phase: string }) => a.phase === "intent").map((a: { attempt: number }) => a.attempt),
    ).toEqual([1, 2]);
    expect((await askFor("t-1", settled.key)).body.reason).toBe("in_flight");
  });

  it("retry_scheduled is in flight until not_before, then takes the next attempt", async () => {
    const waiting = await guardedWith({
      ok: false,
      commit_state: "not_committed",
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: iso(3600) },
    });
    expect((await read(waiting.id)).status).toBe("retry_scheduled");
    expect((await askFor("t-1", waiting.key)).body).toMatchObject({
      allow: false,
      reason: "in_flight",
      invocation_id: waiting.id,
    });

    const due = await guardedWith({
      ok: false,
      commit_state: "not_committed",
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: iso(-1) },
    });
    expect((await askFor("t-1", due.key)).body).toMatchObject({ allow: true, reason: null, invocation_id: due.id });
  });

  it("needs_input and failed take the next attempt of the same invocation", async () => {
    for (const envelope of [
      {
        code: "INVALID_AMOUNT",
        message: "amount must be positive",
        retryable: false,
        hint: "send a positive amount",
        field: "amount",
      },
      { ok: false, commit_state: "not_committed", next_action: "none", retry: { directive: "never" } },
    ]) {
      const done = await guardedWith(envelope);
      expect(["needs_input", "failed"]).toContain((await read(done.id)).status);
      expect((await askFor("t-1", done.key)).body).toMatchObject({ allow: true, reason: null, invocation_id: done.id });
      expect((await read(done.id)).status).toBe("pending");
    }
  });

  it("awaiting approval is in flight; approved proceeds as the same invocation only", async () => {
    const approval = await guardedWith({ ok: false, commit_state: "not_committed", next_action: "request_approval" });
    expect((await askFor("t-1", approval.key)).body).toMatchObject({
      allow: false,
      reason: "in_flight",
      invocation_id: approval.id,
    });
    await act(approval.id, { action: "approve" });
    expect((await askFor("t-1", approval.key, { invocation_id: "someone-else" })).body).toMatchObject({
      allow: false,
      reason: "in_flight",
      invocation_id: approval.id,
    });
    expect((await askFor("t-1", approval.key, { invocation_id: approval.id })).body).toMatchObject({
      allow: true,
      reason: null,
      invocation_id: approval.id,
    });
    expect((await read(approval.id)).status).toBe("pending");
  });

  it("a rejected invocation stays closed: a new try is a new invocation, naming the rejected one is refused", async () => {
    const rejected = await guardedWith({ ok: false, commit_state: "not_committed", next_action: "request_approval" });
    await act(rejected.id, { action: "reject", note: "not this customer" });
    const named = await askFor("t-1", rejected.key, { invocation_id: rejected.id });
    expect(named.status).toBe(409);
    expect(named.body).toMatchObject({ ok: false, code: "TRANSITION_REFUSED" });
    const again = await askFor("t-1", rejected.key);
    expect(again.body).toMatchObject({ allow: true, reason: null });
    expect(again.body.invocation_id).not.toBe(rejected.id);
    expect((await read(rejected.id)).status).toBe("rejected");
    expect((await read(again.body.invocation_id)).status).toBe("pending");
  });

  it("answers the attempt number (the intent's when allowed, the blocking invocation's latest when denied) and keeps the call sent with the intent", async () => {
    const key = fresh();
    const first = await askFor("t-1", key, {
      budget_left_s: 30,
      args_digest: "sha256:abc",
      envelope: {
        method: "tools/call",
        params: { name: "create_invoice", arguments: { amount: 5, api_key: "sk-secret-value" } },
      },
    });
    expect(first.body).toEqual({ allow: true, reason: null, invocation_id: `t-1:${key}`, attempt: 1 });
    expect((await askFor("t-1", key)).body).toEqual({
      allow: false,
      reason: "in_flight",
      invocation_id: `t-1:${key}`,
      attempt: 1,
    });
    const inv = await read(`t-1:${key}`);
    expect(inv.attempts[0]).toMatchObject({
      phase: "intent",
      attempt: 1,
      envelope: { params: { arguments: { amount: 5, api_key: "[redacted]" } } },
    });
    expect(Date.parse(inv.stall_at) - Date.parse(inv.attempts[0].at)).toBe(30_000);
    await outcome(`t-1:${key}`, "t-1", key, { ok: false, commit_state: "unknown" });
    await act(`t-1:${key}`, { action: "mark_reconciled", commit_state: "not_committed", note: "not in the ledger" });
    expect((await askFor("t-1", key)).body).toEqual({
      allow: true,
      reason: null,
      invocation_id: `t-1:${key}`,
      attempt: 2,
    });
  });

  it("refuses to move an invocation to another key, and another runtime's invocations do not count", async () => {
    const { key: otherKey } = await createRuntimeKey(t.db, `rt-other-${backend}`);
    const key = fresh();
    const mine = await askFor("t-1", key);
    const res = await askFor("t-1", fresh(), { invocation_id: mine.body.invocation_id });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ ok: false, code: "INVALID_REQUEST" });
    const theirs = await ask({ task_id: "t-1", tool: "create_invoice", idempotency_key: key }, otherKey);
    expect(theirs.body).toMatchObject({ allow: true, reason: null, invocation_id: `t-1:${key}` });
  });

  it("takes runtime keys only and validates the body", async () => {
    const { token } = await createOperator(t.db, "admin");
    expect((await ask({ task_id: "t", tool: "x", idempotency_key: "k" }, token)).status).toBe(403);
    const missing = await ask({ task_id: "t", tool: "x" });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ ok: false, code: "INVALID_REQUEST" });
    expect((await ask({ task_id: "t", tool: "x", idempotency_key: "k2", at: "yesterday" })).body).toMatchObject({
      code: "INVALID_REQUEST",
    });
    expect(await checks("k2")).toEqual([]);
  });

  it("50 concurrent calls for one new key: exactly one is allowed and one intent is written", async () => {
    const key = fresh();
    const answers = await Promise.all(Array.from({ length: 50 }, () => askFor("t-c", key)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const allowed = answers.filter((a) => a.body.allow);
    expect(allowed).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.invocation_id))).toEqual(new Set([`t-c:${key}`]));
    expect(answers.filter((a) => !a.body.allow).every((a) => a.body.reason === "in_flight")).toBe(true);
    expect((await read(`t-c:${key}`)).attempts).toHaveLength(1);
    const recorded = await checks(key);
    expect(recorded.filter((c) => c.allow)).toHaveLength(1);
    expect(recorded.filter((c) => !c.allow && c.reason === "in_flight")).toHaveLength(49);
  });

  it("concurrent calls for different keys do not block each other", async () => {
    const keys = Array.from({ length: 20 }, fresh);
    const answers = await Promise.all(keys.map((k) => askFor("t-d", k)));
    expect(answers.map((a) => a.body.allow)).toEqual(keys.map(() => true));
  });

  it.runIf(backend === "postgres")("two app instances on one database still allow exactly one", async () => {
    const driver = createPostgresDriver(env().DATABASE_URL!, 10);
    const second: Db = { driver, prisma: new PrismaClient({ adapter: new PrismaPg(driver.pool!) }) };
    try {
      const runtime = await t.db.prisma.runtime.findUniqueOrThrow({ where: { name: t.runtime } });
      const key = fresh();
      const body = { task_id: "t-i", tool: "create_invoice", idempotency_key: key };
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => guardWrite(i % 2 === 0 ? t.db : second, runtime, body)),
      );
      expect(answers.filter((a) => a.allow)).toHaveLength(1);
      expect((await read(`t-i:${key}`)).attempts).toHaveLength(1);
    } finally {
      await second.prisma.$disconnect();
      await driver.close();
    }
  });
});
