import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, getTask, ingest, listInvocations } from "./routes";

const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 5, 0, s)).toISOString();

describe.each<Backend>(["postgres", "pglite"])("ingest API on %s", (backend) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle(backend);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("answers 207 with a result per record for a mixed batch, storing only the valid ones", async () => {
    const res = await call(ingest, {
      key: t.key,
      body: {
        records: [
          {
            event_id: "mix-1",
            task_id: "ord-1",
            invocation_id: "inv-mix",
            attempt: 1,
            tool: "create_order",
            phase: "intent",
            at: at(0),
            effect_class: "create",
          },
          { event_id: "mix-2", tool: "create_order" },
          {
            event_id: "mix-3",
            task_id: "ord-1",
            invocation_id: "inv-mix",
            attempt: 1,
            tool: "create_order",
            at: at(8),
            envelope: {
              ok: false,
              commit_state: "unknown",
              code: "OUTCOME_UNKNOWN",
              next_action: "verify_operation",
              retry: { directive: "never", max_attempts_remaining: 0 },
            },
          },
          { event_id: "mix-4", task_id: "ord-1", tool: "create_order" },
        ],
      },
    });
    expect(res.status).toBe(207);
    expect(res.body).toMatchObject({ accepted: 2, duplicates: 0, rejected: 2 });
    expect(res.body.results.map((r: { status: string }) => r.status)).toEqual([
      "accepted",
      "rejected",
      "accepted",
      "rejected",
    ]);
    expect(res.body.results[1].error).toMatchObject({
      ok: false,
      code: "MISSING_REQUIRED_FIELD",
      commit_state: "not_committed",
      next_action: "correct_input",
    });
    expect(res.body.results[3].error).toMatchObject({ code: "MISSING_INVOCATION_ID" });

    const inv = await call(getInvocation, { key: t.key, params: { invocation_id: "inv-mix" } });
    expect(inv.status).toBe(200);
    expect(inv.body).toMatchObject({
      status: "outcome_unknown",
      commit_state: "unknown",
      next_action: "verify_operation",
      attempt_count: 1,
      version: 1,
    });
    expect(inv.body.attempts).toHaveLength(2);
    expect(inv.body.attempts.map((a: { event_id: string }) => a.event_id)).toEqual(["mix-1", "mix-3"]);
  });

  it("a repeated event_id answers duplicate and changes nothing", async () => {
    const record = {
      event_id: "dup-1",
      task_id: "ord-2",
      invocation_id: "inv-dup",
      tool: "send_email",
      at: at(1),
      envelope: { outcome: "ok", effect_applied: "yes" },
    };
    const first = await call(ingest, { key: t.key, body: record });
    expect(first.body.results[0].status).toBe("accepted");
    const before = await call(getInvocation, { key: t.key, params: { invocation_id: "inv-dup" } });
    const again = await call(ingest, {
      key: t.key,
      body: { ...record, envelope: { outcome: "unknown", effect_applied: "unknown" } },
    });
    expect(again.status).toBe(207);
    expect(again.body).toMatchObject({ accepted: 0, duplicates: 1 });
    const after = await call(getInvocation, { key: t.key, params: { invocation_id: "inv-dup" } });
    expect(after.body).toEqual(before.body);
    expect(after.body.status).toBe("succeeded");
  });

  it("a record without event_id is keyed by a stable hash of its content", async () => {
    const record = {
      task_id: "ord-3",
      idempotency_key: "k-hash",
      tool: "create_order",
      at: at(2),
      envelope: { outcome: "ok", effect_applied: "yes" },
    };
    const a = await call(ingest, { key: t.key, body: record });
    const b = await call(ingest, {
      key: t.key,
      body: {
        envelope: record.envelope,
        at: record.at,
        tool: record.tool,
        idempotency_key: record.idempotency_key,
        task_id: record.task_id,
      },
    });
    expect(a.body.results[0]).toMatchObject({ status: "accepted", invocation_id: "ord-3:k-hash" });
    expect(a.body.results[0].event_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(b.body.results[0]).toMatchObject({ status: "duplicate", event_id: a.body.results[0].event_id });
  });

  it("the same event twice in one batch is one accepted and one duplicate", async () => {
    const r = { event_id: "twice", task_id: "ord-4", invocation_id: "inv-twice", tool: "t", at: at(3) };
    const res = await call(ingest, { key: t.key, body: { records: [r, r] } });
    expect(res.body.results.map((x: { status: string }) => x.status)).toEqual(["accepted", "duplicate"]);
  });

  it("accepts NDJSON, rejecting only an unparsable line", async () => {
    const lines = [
      JSON.stringify({
        event_id: "nd-1",
        task_id: "ord-5",
        invocation_id: "inv-nd",
        tool: "create_refund",
        phase: "intent",
        attempt: 1,
        at: at(0),
        effect_class: "money",
      }),
      "{not json",
      JSON.stringify({
        event_id: "nd-2",
        task_id: "ord-5",
        invocation_id: "inv-nd",
        tool: "create_refund",
        attempt: 1,
        at: at(4),
        effect_class: "money",
        envelope: { status: "post_dispatch_evidence_failed", retryable: false, reconciliation_required: true },
      }),
      "",
    ].join("\n");
    const res = await call(ingest, { key: t.key, raw: lines, contentType: "application/x-ndjson" });
    expect(res.status).toBe(207);
    expect(res.body.results.map((x: { status: string }) => x.status)).toEqual(["accepted", "rejected", "accepted"]);
    expect(res.body.results[1].error.code).toBe("INVALID_JSON");
    const inv = await call(getInvocation, { key: t.key, params: { invocation_id: "inv-nd" } });
    expect(inv.body).toMatchObject({ status: "outcome_unknown", commit_state: "unknown", effect_class: "money" });
    expect(inv.body.attempts[1]).toMatchObject({
      dialect: "seed004",
      dispatch_stage: "evidence_failed",
      retry: { directive: "never" },
    });
  });

  it("redacts secrets in safe_details and in the stored envelope, and stores NUL as U+FFFD", async () => {
    await call(ingest, {
      key: t.key,
      body: {
        event_id: "secret-1",
        task_id: "ord-6",
        invocation_id: "inv-secret",
        tool: "charge",
        at: at(5),
        envelope: {
          ok: false,
          commit_state: "unknown",
          code: "OUTCOME_UNKNOWN",
          next_action: "verify_operation",
          safe_details: { api_key: "sk_live_abc", field: "amount" },
          agent_message: "nul\u0000here",
          request: { headers: { Authorization: "Bearer sk_live_abc", cookie: "sid=1" }, password: "hunter2" },
        },
      },
    });
    const inv = await call(getInvocation, { key: t.key, params: { invocation_id: "inv-secret" } });
    const attempt = inv.body.attempts[0];
    expect(attempt.safe_details).toEqual({ api_key: "[redacted]", field: "amount" });
    expect(attempt.agent_message).toBe("nul\uFFFDhere");
    expect(attempt.envelope.request).toEqual({
      headers: { Authorization: "[redacted]", cookie: "[redacted]" },
      password: "[redacted]",
    });
    expect(JSON.stringify(inv.body)).not.toContain("sk_live_abc");
    expect(JSON.stringify(inv.body)).not.toContain("hunter2");
  });

  it("reads a task with its invocations, and lists with filters and a cursor", async () => {
    const task = await call(getTask, { key: t.key, params: { task_id: "ord-1" } });
    expect(task.status).toBe(200);
    expect(task.body).toMatchObject({ task_id: "ord-1", runtime: "rt-test" });
    expect(task.body.invocations.map((i: { invocation_id: string }) => i.invocation_id)).toEqual(["inv-mix"]);

    const unknown = await call(listInvocations, { key: t.key, path: "/api/v1/invocations?status=outcome_unknown" });
    // inv-twice's outcome carried no envelope: no evidence, so a write's outcome is unknown.
    expect(unknown.body.items.map((i: { invocation_id: string }) => i.invocation_id).sort()).toEqual([
      "inv-mix",
      "inv-nd",
      "inv-secret",
      "inv-twice",
    ]);

    const page1 = await call(listInvocations, { key: t.key, path: "/api/v1/invocations?limit=2" });
    expect(page1.body.items).toHaveLength(2);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await call(listInvocations, {
      key: t.key,
      path: `/api/v1/invocations?limit=2&cursor=${page1.body.next_cursor}`,
    });
    const ids = [...page1.body.items, ...page2.body.items].map((i: { invocation_id: string }) => i.invocation_id);
    expect(new Set(ids).size).toBe(ids.length);

    const byQ = await call(listInvocations, { key: t.key, path: "/api/v1/invocations?q=k-hash" });
    expect(byQ.body.items.map((i: { invocation_id: string }) => i.invocation_id)).toEqual(["ord-3:k-hash"]);

    const bad = await call(listInvocations, { key: t.key, path: "/api/v1/invocations?status=nope" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ ok: false, code: "INVALID_REQUEST" });
  });

  it("unknown invocation and task answer 404 with the error envelope", async () => {
    const res = await call(getInvocation, { key: t.key, params: { invocation_id: "nope" } });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ ok: false, code: "NOT_FOUND", commit_state: "not_committed" });
  });
});
