import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, openSettle, type TestContext } from "./harness";
import { getInvocation, getTask, ingest, listInvocations } from "./routes";

// source article 002 (docs/outcome-model.md)'s six failure fixtures and source article 004 (docs/outcome-model.md)'s fault test, as far as ingest
// and read go: what Settle stores and shows for each story.

const base = Date.parse("2026-11-29T05:12:00.000Z");
const at = (s: number) => new Date(base + s * 1000).toISOString();

describe("source article 002 (docs/outcome-model.md) fixtures and source article 004 (docs/outcome-model.md)'s evidence failure", () => {
  let t: TestContext;
  const send = async (...records: object[]) => {
    const res = await call(ingest, { key: t.key, body: { records } });
    expect(res.status).toBe(207);
    expect(res.body.rejected).toBe(0);
    return res.body;
  };
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;

  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("1 — kill mid-call: unknown, then a probe, then committed without a second effect", async () => {
    const r = {
      task_id: "ord-7741",
      invocation_id: "f1",
      tool: "create_order",
      effect_class: "create",
      idempotency_key: "9c1f",
    };
    await send(
      { ...r, event_id: "f1-i1", attempt: 1, phase: "intent", at: at(0), budget_left_s: 42 },
      {
        ...r,
        event_id: "f1-o1",
        attempt: 1,
        at: at(8),
        envelope: { content: [{ type: "text", text: "connection reset by peer" }], isError: true },
      },
    );
    expect(await read("f1")).toMatchObject({
      status: "outcome_unknown",
      commit_state: "unknown",
      next_action: "verify_operation",
    });
    await send({
      ...r,
      event_id: "f1-p1",
      attempt: 1,
      phase: "probe",
      at: at(20),
      envelope: { ok: true, commit_state: "committed", operation_ref: "9c1f" },
    });
    const inv = await read("f1");
    expect(inv).toMatchObject({
      status: "reconciled",
      commit_state: "committed",
      attempt_count: 1,
      resolution: { by: "probe", commit_state: "committed" },
    });
    expect(inv.attempts.map((a: { phase: string }) => a.phase)).toEqual(["intent", "outcome", "probe"]);
  });

  it("2 — duplicate delivery: the same key twice is one invocation, one effect", async () => {
    const r = { task_id: "ord-2", tool: "send_email", effect_class: "send", idempotency_key: "mail-ord-2-notice-1" };
    const first = await send({
      ...r,
      event_id: "f2-a1",
      attempt: 1,
      at: at(0),
      envelope: { outcome: "ok", effect_applied: "yes" },
    });
    const second = await send({
      ...r,
      event_id: "f2-a2",
      attempt: 2,
      at: at(5),
      envelope: { outcome: "ok", effect_applied: "yes", message: "deduplicated by receiver" },
    });
    expect(first.results[0].invocation_id).toBe(second.results[0].invocation_id);
    const again = await send({
      ...r,
      event_id: "f2-a2",
      attempt: 2,
      at: at(5),
      envelope: { outcome: "ok", effect_applied: "yes" },
    });
    expect(again.duplicates).toBe(1);
    const inv = await read(first.results[0].invocation_id);
    expect(inv).toMatchObject({ status: "succeeded", commit_state: "committed", attempt_count: 2 });
    expect(inv.attempts).toHaveLength(2);
  });

  it("3 — 200 with an error body: decided by the body, never ok on status alone", async () => {
    await send({
      event_id: "f3",
      task_id: "ord-3",
      invocation_id: "f3",
      tool: "charge_card",
      effect_class: "money",
      at: at(0),
      envelope: {
        outcome: "permanent",
        effect_applied: "no",
        http_status: 200,
        message: "200 OK; body says card_declined",
      },
    });
    expect(await read("f3")).toMatchObject({ status: "failed", commit_state: "not_committed" });
  });

  it("4 — slow success at 29 s of a 30 s budget: no stall, and a late retry intent does not reopen it", async () => {
    const r = { task_id: "ord-4", invocation_id: "f4", tool: "book_slot", effect_class: "create" };
    await send({ ...r, event_id: "f4-i1", attempt: 1, phase: "intent", at: at(0), budget_left_s: 30 });
    await send({ ...r, event_id: "f4-o1", attempt: 1, at: at(29), envelope: { outcome: "ok", effect_applied: "yes" } });
    await send({ ...r, event_id: "f4-i2", attempt: 2, phase: "intent", at: at(31) });
    expect(await read("f4")).toMatchObject({ status: "succeeded", commit_state: "committed", stall_at: null });
  });

  it("5 — partial batch: per-item outcomes kept, in the queue", async () => {
    await send({
      event_id: "f5",
      task_id: "sheet-9",
      invocation_id: "f5",
      tool: "write_rows",
      effect_class: "create",
      at: at(0),
      envelope: {
        outcome: "permanent",
        effect_applied: "partial",
        items: [
          { id: "row_12", applied: "yes" },
          { id: "row_13", applied: "no", reason: "merged cell" },
          { id: "row_14", applied: "unknown" },
        ],
        message: "38 of 40 rows written; 1 blocked, 1 unresolved",
      },
    });
    const inv = await read("f5");
    expect(inv).toMatchObject({ status: "partially_applied", commit_state: "partial" });
    expect(inv.attempts[0].items).toEqual([
      { item_id: "row_12", applied: "yes", reason: null },
      { item_id: "row_13", applied: "no", reason: "merged cell" },
      { item_id: "row_14", applied: "unknown", reason: null },
    ]);
  });

  it("6 — rate limit with Retry-After: retry scheduled, not before at + 30 s", async () => {
    await send({
      event_id: "f6",
      task_id: "ord-6",
      invocation_id: "f6",
      tool: "get_price",
      effect_class: "read",
      at: at(0),
      envelope: { type: "about:blank", title: "Too Many Requests", status: 429, retry_after: 30 },
    });
    expect(await read("f6")).toMatchObject({
      status: "retry_scheduled",
      commit_state: "not_committed",
      not_before: at(30),
    });
  });

  it("source article 002 (docs/outcome-model.md)'s attempt log line is a record: written before the call, updated after", async () => {
    const line = {
      task: "ord-7741",
      call: "create_order",
      intent_key: "9c1f-line",
      attempt: 2,
      started: "05:12:04",
      budget_left_s: 42,
    };
    const before = await send(line);
    const after = await send({ ...line, outcome: "unknown", probe: "found" });
    expect(before.results[0].invocation_id).toBe("ord-7741:9c1f-line");
    const inv = await read(after.results[0].invocation_id);
    expect(inv).toMatchObject({
      status: "reconciled",
      commit_state: "committed",
      idempotency_key: "9c1f-line",
      tool: "create_order",
    });
    expect(inv.attempts.map((a: { dialect: string; phase: string }) => [a.phase, a.dialect])).toEqual([
      ["intent", "settle"],
      ["outcome", "seed002"],
    ]);
    expect(inv.attempts[1]).toMatchObject({
      probe_result: "found",
      envelope: { ...line, outcome: "unknown", probe: "found" },
    });
  });

  it("source article 004 (docs/outcome-model.md) — evidence write fails after dispatch: non-retryable unknown, no second dispatch, reconciled by identity", async () => {
    const r = {
      task_id: "refund-88",
      invocation_id: "inv-7f3",
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: "refund-88-full",
    };
    await send({ ...r, event_id: "s4-i1", attempt: 1, phase: "intent", at: at(0), args_digest: "sha256:ab12" });
    await send({
      ...r,
      event_id: "s4-o1",
      attempt: 1,
      at: at(3),
      envelope: {
        status: "post_dispatch_evidence_failed",
        retryable: false,
        reconciliation_required: true,
        invocation_id: "inv-7f3",
      },
    });
    let inv = await read("inv-7f3");
    expect(inv).toMatchObject({ status: "outcome_unknown", commit_state: "unknown", next_action: "verify_operation" });
    expect(inv.attempts[1]).toMatchObject({
      dispatch_stage: "evidence_failed",
      retry: { directive: "never", max_attempts_remaining: 0 },
    });
    // A runtime that tries again anyway does not make the unknown go away.
    await send({ ...r, event_id: "s4-i2", attempt: 2, phase: "intent", at: at(10) });
    expect((await read("inv-7f3")).status).toBe("outcome_unknown");
    await send({
      ...r,
      event_id: "s4-p1",
      attempt: 1,
      phase: "probe",
      at: at(20),
      envelope: { ok: true, commit_state: "committed" },
    });
    inv = await read("inv-7f3");
    expect(inv).toMatchObject({ status: "reconciled", commit_state: "committed", resolution: { by: "probe" } });
    const task = await call(getTask, { key: t.key, params: { task_id: "refund-88" } });
    expect(task.body.invocations).toHaveLength(1);
  });

  it("a probe that fails leaves the outcome unknown and escalates", async () => {
    const r = { task_id: "ord-8", invocation_id: "f8", tool: "delete_record", effect_class: "destructive" };
    await send({ ...r, event_id: "f8-o", attempt: 1, at: at(0), envelope: { title: "Gateway Timeout", status: 504 } });
    await send({
      ...r,
      event_id: "f8-p",
      attempt: 1,
      phase: "probe",
      at: at(9),
      envelope: { content: [{ type: "text", text: "lookup failed" }], isError: true },
    });
    expect(await read("f8")).toMatchObject({ status: "escalated", commit_state: "unknown" });
  });

  it("evidence that disagrees with a settlement re-opens it with conflict", async () => {
    const r = { task_id: "ord-9", invocation_id: "f9", tool: "create_invoice", effect_class: "create" };
    await send({ ...r, event_id: "f9-o", attempt: 1, at: at(0), envelope: { ok: true, commit_state: "committed" } });
    await send({
      ...r,
      event_id: "f9-p",
      attempt: 1,
      phase: "probe",
      at: at(60),
      envelope: { ok: false, commit_state: "not_committed", code: "NOT_FOUND", next_action: "none" },
    });
    expect(await read("f9")).toMatchObject({ status: "outcome_unknown", conflict: true });
    const queue = await call(listInvocations, { key: t.key, path: "/api/v1/invocations?status=outcome_unknown" });
    expect(queue.body.items.map((i: { invocation_id: string }) => i.invocation_id)).toContain("f9");
  });

  it("a stalled intent shows as stalled the moment its window passes", async () => {
    const now = Date.now();
    await send(
      {
        event_id: "st-old",
        task_id: "ord-10",
        invocation_id: "st-old",
        tool: "send_sms",
        effect_class: "send",
        phase: "intent",
        at: new Date(now - 10_000).toISOString(),
        budget_left_s: 5,
      },
      {
        event_id: "st-new",
        task_id: "ord-10",
        invocation_id: "st-new",
        tool: "send_sms",
        effect_class: "send",
        phase: "intent",
        at: new Date(now).toISOString(),
        budget_left_s: 2,
      },
    );
    expect(await read("st-old")).toMatchObject({ status: "stalled", next_action: "verify_operation" });
    expect((await read("st-new")).status).toBe("pending");
    const stalledNow = await call(listInvocations, { key: t.key, path: "/api/v1/invocations?status=stalled" });
    expect(stalledNow.body.items.map((i: { invocation_id: string }) => i.invocation_id)).toEqual(["st-old"]);
    await new Promise((r) => setTimeout(r, Math.max(0, now + 2_050 - Date.now())));
    expect((await read("st-new")).status).toBe("stalled");
  });
});
