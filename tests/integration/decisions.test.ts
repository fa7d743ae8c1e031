import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OperatorAction } from "@/lib/outcome/actions";
import { actOnInvocation } from "@/lib/invocations/act";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getDecision, getInvocation, ingest } from "./routes";

// GET /api/v1/invocations/{id}/decision (docs/outcome-model.md §5): every decision value from
// records and operator actions, who decided and when, 404 across runtimes,
// ETag / If-None-Match, and the long poll.

const iso = (offsetS: number) => new Date(Date.now() + offsetS * 1000).toISOString();
const T0 = iso(-600);
const T1 = iso(-300);
const DECISION_KEYS = [
  "approved_arguments",
  "commit_state",
  "decided_at",
  "decided_by",
  "decision",
  "invocation_id",
  "reason",
  "reply",
  "status",
  "version",
];

type Poll = { status: number; body: any; headers: Headers; ms: number };

describe.each<Backend>(["postgres", "pglite"])("decisions on %s", (backend) => {
  let t: TestContext;
  let otherKey: string;

  /** Calls the route as Next.js does, with headers and an abort signal the harness does not offer. */
  async function poll(
    id: string,
    options: { wait?: number | string; etag?: string; signal?: AbortSignal; key?: string } = {},
  ): Promise<Poll> {
    const query = options.wait === undefined ? "" : `?wait=${options.wait}`;
    const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? t.key}` };
    if (options.etag) headers["if-none-match"] = options.etag;
    const started = Date.now();
    const req = new Request(`http://settle.test/api/v1/invocations/${encodeURIComponent(id)}/decision${query}`, {
      headers,
      signal: options.signal,
    });
    const res = await getDecision(req, { params: Promise.resolve({ invocation_id: id }) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers, ms: Date.now() - started };
  }
  const decision = async (id: string) => (await poll(id)).body;
  const send = async (records: object[]) =>
    expect((await call(ingest, { key: t.key, body: { records } })).body.rejected).toBe(0);
  const record = (id: string, extra: object) => ({
    event_id: `${id}:${Math.random()}`,
    task_id: "ord-1",
    invocation_id: id,
    attempt: 1,
    tool: "create_invoice",
    effect_class: "create",
    at: T1,
    ...extra,
  });
  const intent = (id: string, extra: object = {}) => send([record(id, { phase: "intent", at: T0, ...extra })]);
  const outcome = (id: string, envelope: object, extra: object = {}) =>
    send([record(id, { phase: "outcome", envelope, ...extra })]);
  const act = async (id: string, action: OperatorAction, actor = "ana@example.com") => {
    const version = (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body.version;
    const done = await actOnInvocation(t.db, { invocationId: id }, action, { actor, version });
    expect(done.ok).toBe(true);
    return done.ok ? done.invocation : null;
  };
  const unknownWrite = (id: string) => outcome(id, { title: "Gateway Timeout", status: 504 });
  const needsApproval = (id: string) =>
    outcome(id, { ok: false, commit_state: "not_committed", next_action: "request_approval" });

  beforeAll(async () => {
    // A small pool: a held long poll must not keep a connection (checked below).
    t = await openSettle(backend, { SETTLE_DB_POOL_SIZE: "3" });
    otherKey = (await createRuntimeKey(t.db, "rt-neighbour")).key;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  describe("every decision value", () => {
    it("wait: pending (intent only), decided by the runtime when it wrote the intent", async () => {
      await intent("w-pending", { budget_left_s: 3600 });
      const d = await decision("w-pending");
      expect(Object.keys(d).sort()).toEqual(DECISION_KEYS);
      expect(d).toMatchObject({
        invocation_id: "w-pending",
        status: "pending",
        decision: "wait",
        commit_state: "unknown",
        decided_by: "runtime",
        decided_at: T0,
        version: 1,
      });
      expect(d.reason).toEqual(expect.any(String));
    });

    it("wait: stalled, decided by Settle's stall window when it ran out", async () => {
      await intent("w-stalled", { budget_left_s: 30 });
      expect(await decision("w-stalled")).toMatchObject({
        status: "stalled",
        decision: "wait",
        decided_by: "system",
        decided_at: new Date(Date.parse(T0) + 30_000).toISOString(),
      });
    });

    it("wait: outcome_unknown, partially_applied, awaiting_approval, escalated", async () => {
      await unknownWrite("w-unknown");
      expect(await decision("w-unknown")).toMatchObject({
        status: "outcome_unknown",
        decision: "wait",
        commit_state: "unknown",
        decided_by: "runtime",
        decided_at: T1,
      });
      await outcome("w-partial", {
        outcome: "ok",
        effect_applied: "partial",
        items: [
          { item_id: "a", applied: "yes" },
          { item_id: "b", applied: "unknown" },
        ],
      });
      expect(await decision("w-partial")).toMatchObject({
        status: "partially_applied",
        decision: "wait",
        commit_state: "partial",
      });
      await needsApproval("w-approval");
      expect(await decision("w-approval")).toMatchObject({
        status: "awaiting_approval",
        decision: "wait",
        commit_state: "not_committed",
      });
      await unknownWrite("w-escalated");
      const escalated = await act("w-escalated", { action: "escalate", note: "provider down" }, "system");
      expect(await decision("w-escalated")).toMatchObject({
        status: "escalated",
        decision: "wait",
        decided_by: "system",
        decided_at: escalated!.status_since,
      });
    });

    it("verify: an operator asked for a probe", async () => {
      await unknownWrite("v-1");
      const asked = await act("v-1", { action: "request_verification" });
      expect(await decision("v-1")).toMatchObject({
        status: "verifying",
        decision: "verify",
        decided_by: "ana@example.com",
        decided_at: asked!.status_since,
        version: asked!.version,
      });
    });

    it("do_not_retry: committed by the outcome, a probe, or an operator", async () => {
      await outcome("c-outcome", { ok: true, commit_state: "committed" });
      expect(await decision("c-outcome")).toMatchObject({
        status: "succeeded",
        decision: "do_not_retry",
        commit_state: "committed",
        decided_by: "runtime",
        decided_at: T1,
      });

      await unknownWrite("c-probe");
      const probeAt = iso(-60);
      await send([
        record("c-probe", { phase: "probe", at: probeAt, envelope: { ok: true, commit_state: "committed" } }),
      ]);
      expect(await decision("c-probe")).toMatchObject({
        status: "reconciled",
        decision: "do_not_retry",
        commit_state: "committed",
        decided_by: "probe",
        decided_at: probeAt,
      });

      await unknownWrite("c-operator");
      const settled = await act(
        "c-operator",
        { action: "mark_reconciled", commit_state: "committed", note: "INV-7 exists" },
        "bo@example.com",
      );
      expect(await decision("c-operator")).toMatchObject({
        decision: "do_not_retry",
        decided_by: "bo@example.com",
        decided_at: settled!.resolution!.at,
      });
    });

    it("retry_allowed: settled as not committed, or once not_before has passed", async () => {
      await unknownWrite("r-settled");
      await act("r-settled", { action: "record_verification", result: "absent", evidence: "no invoice in the ledger" });
      expect(await decision("r-settled")).toMatchObject({
        status: "reconciled",
        decision: "retry_allowed",
        commit_state: "not_committed",
        decided_by: "ana@example.com",
      });

      const passed = iso(-30);
      await outcome("r-due", {
        ok: false,
        commit_state: "not_committed",
        next_action: "wait_and_retry",
        retry: { directive: "after_delay", not_before: passed },
      });
      expect(await decision("r-due")).toMatchObject({
        status: "retry_scheduled",
        decision: "retry_allowed",
        decided_by: "runtime",
        decided_at: passed,
      });

      await outcome("r-later", {
        ok: false,
        commit_state: "not_committed",
        next_action: "wait_and_retry",
        retry: { directive: "after_delay", not_before: iso(3600) },
      });
      expect(await decision("r-later")).toMatchObject({ status: "retry_scheduled", decision: "wait", decided_at: T1 });
    });

    it("correct_input: the request must change", async () => {
      await outcome("i-1", {
        code: "INVALID_AMOUNT",
        message: "amount must be positive",
        retryable: false,
        hint: "send a positive amount",
        field: "amount",
      });
      expect(await decision("i-1")).toMatchObject({
        status: "needs_input",
        decision: "correct_input",
        commit_state: "not_committed",
        decided_by: "runtime",
      });
    });

    it("proceed after approval; abandon after rejection or a permanent failure", async () => {
      await needsApproval("p-1");
      const approved = await act("p-1", { action: "approve" }, "cy@example.com");
      expect(await decision("p-1")).toMatchObject({
        status: "approved",
        decision: "proceed",
        decided_by: "cy@example.com",
        decided_at: approved!.status_since,
      });

      await needsApproval("a-rejected");
      await act("a-rejected", { action: "reject", note: "approval expired" }, "system");
      expect(await decision("a-rejected")).toMatchObject({
        status: "rejected",
        decision: "abandon",
        decided_by: "system",
      });

      await outcome("a-failed", {
        ok: false,
        commit_state: "not_committed",
        next_action: "none",
        retry: { directive: "never" },
      });
      expect(await decision("a-failed")).toMatchObject({
        status: "failed",
        decision: "abandon",
        decided_by: "runtime",
        decided_at: T1,
      });
    });

    it("a record after an operator's action is what decided: an approved invocation's new attempt is pending again", async () => {
      await needsApproval("p-2");
      await act("p-2", { action: "approve" });
      const at = iso(-10);
      await send([record("p-2", { phase: "intent", attempt: 2, at })]);
      expect(await decision("p-2")).toMatchObject({
        status: "pending",
        decision: "wait",
        decided_by: "runtime",
        decided_at: at,
      });
    });
  });

  it("another runtime's invocation is a 404, exactly like one that does not exist; people use the invocation API", async () => {
    await unknownWrite("mine-1");
    const theirs = await poll("mine-1", { key: otherKey });
    const none = await poll("nobody-has-this", { key: otherKey });
    expect(theirs.status).toBe(404);
    expect(none.status).toBe(404);
    expect(theirs.body).toMatchObject({ ok: false, code: "NOT_FOUND", next_action: "correct_input" });
    expect(theirs.body.agent_message).toBe(none.body.agent_message.replace("nobody-has-this", "mine-1"));
    const { token } = await createOperator(t.db, "admin");
    expect((await poll("mine-1", { key: token })).status).toBe(403);
  });

  it("ETag: strong, stable while nothing changes, 304 for If-None-Match (weak or in a list too), new after a change", async () => {
    await unknownWrite("e-1");
    const first = await poll("e-1");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect((await poll("e-1")).headers.get("etag")).toBe(etag);

    for (const given of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await poll("e-1", { etag: given });
      expect(again.status).toBe(304);
      expect(again.body).toBeNull();
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.headers.get("cache-control")).toBe("no-store");
    }
    expect((await poll("e-1", { etag: '"something-else"' })).status).toBe(200);

    await act("e-1", { action: "assign", assignee: "ana@example.com" });
    const assigned = await poll("e-1", { etag });
    expect(assigned.status).toBe(200);
    expect(assigned.headers.get("etag")).not.toBe(etag);
  });

  describe("long polling", () => {
    it("returns as soon as an operator acts during the wait", async () => {
      await unknownWrite("lp-act");
      // Bounds well inside the wait, not near the expected time: a loaded machine answers late, never early.
      const held = poll("lp-act", { wait: 15 });
      await new Promise((r) => setTimeout(r, 400));
      await act("lp-act", { action: "request_verification" });
      const res = await held;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: "verifying", decision: "verify" });
      expect(res.ms).toBeGreaterThanOrEqual(350);
      expect(res.ms).toBeLessThan(10_000);
    });

    it("returns when a record changes the version, even if the decision stays the same", async () => {
      await unknownWrite("lp-record");
      const before = await decision("lp-record");
      const held = poll("lp-record", { wait: 15 });
      await new Promise((r) => setTimeout(r, 300));
      await send([
        record("lp-record", {
          phase: "outcome",
          attempt: 1,
          at: iso(-1),
          envelope: { content: [{ type: "text", text: "socket hang up" }], isError: true },
        }),
      ]);
      const res = await held;
      expect(res.body).toMatchObject({ decision: "wait", version: before.version + 1 });
      expect(res.ms).toBeLessThan(10_000);
    });

    it("answers the unchanged decision after the wait (200 without If-None-Match, 304 with it)", async () => {
      await unknownWrite("lp-same");
      const plain = await poll("lp-same", { wait: 0.6 });
      expect(plain.status).toBe(200);
      expect(plain.body.decision).toBe("wait");
      expect(plain.ms).toBeGreaterThanOrEqual(580);

      const conditional = await poll("lp-same", { wait: 0.6, etag: plain.headers.get("etag")! });
      expect(conditional.status).toBe(304);
      expect(conditional.ms).toBeGreaterThanOrEqual(580);
    });

    it("answers at once when If-None-Match is already out of date", async () => {
      await unknownWrite("lp-stale");
      const old = (await poll("lp-stale")).headers.get("etag")!;
      await act("lp-stale", { action: "escalate", note: "needs a manager" });
      const res = await poll("lp-stale", { wait: 15, etag: old });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe("escalated");
      expect(res.ms).toBeLessThan(10_000);
    });

    it("notices retry_scheduled turning into retry_allowed when not_before passes", async () => {
      const notBefore = iso(1.2);
      await outcome("lp-time", {
        ok: false,
        commit_state: "not_committed",
        next_action: "wait_and_retry",
        retry: { directive: "after_delay", not_before: notBefore },
      });
      expect((await decision("lp-time")).decision).toBe("wait");
      const res = await poll("lp-time", { wait: 15 });
      expect(res.body).toMatchObject({ status: "retry_scheduled", decision: "retry_allowed", decided_at: notBefore });
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(notBefore));
      expect(res.ms).toBeLessThan(10_000);
    });

    it("stops when the caller goes away", async () => {
      await unknownWrite("lp-abort");
      const controller = new AbortController();
      const held = poll("lp-abort", { wait: 30, signal: controller.signal });
      setTimeout(() => controller.abort(), 300);
      const res = await held;
      expect(res.ms).toBeLessThan(15_000);
    });

    it("holds no database connection while it waits", async () => {
      await unknownWrite("lp-pool");
      // Twice as many held requests as the pool has connections, and a read still answers at once.
      const held = Array.from({ length: 6 }, () => poll("lp-pool", { wait: 6 }));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      expect((await decision("lp-pool")).decision).toBe("wait");
      expect(Date.now() - started).toBeLessThan(4_000);
      expect((await Promise.all(held)).map((r) => r.status)).toEqual(Array(6).fill(200));
    });

    it.each(["61", "-1", "soon"])("refuses wait=%s", async (wait) => {
      await unknownWrite("lp-bad");
      const res = await poll("lp-bad", { wait });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ ok: false, code: "INVALID_REQUEST" });
    });
  });
});
