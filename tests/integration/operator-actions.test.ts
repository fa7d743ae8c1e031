import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actOnInvocation } from "@/lib/invocations/act";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";

// The console issue wires these to screens; the transitions, the version
// check and the audit trail are the foundation's.

describe.each<Backend>(["postgres", "pglite"])("operator actions on %s", (backend) => {
  let t: TestContext;
  const send = (records: object[]) => call(ingest, { key: t.key, body: { records } });
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;

  beforeAll(async () => {
    t = await openSettle(backend);
    const unknown = (id: string) => ({
      event_id: `${id}-o1`,
      task_id: "ord-1",
      invocation_id: id,
      attempt: 1,
      tool: "charge_card",
      effect_class: "money",
      at: "2026-11-29T05:00:08Z",
      envelope: { title: "Gateway Timeout", status: 504 },
    });
    await send([unknown("op-1"), unknown("op-2"), unknown("op-3")]);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("request verification → record verification found → reconciled as committed, with audit entries", async () => {
    let inv = await read("op-1");
    const asked = await actOnInvocation(
      t.db,
      { invocationId: "op-1" },
      { action: "request_verification", note: "please probe" },
      { actor: "ana@example.com", version: inv.version },
    );
    expect(asked.ok && asked.invocation.status).toBe("verifying");
    inv = await read("op-1");
    const found = await actOnInvocation(
      t.db,
      { invocationId: "op-1" },
      { action: "record_verification", result: "found", evidence: "Stripe charge ch_123 exists" },
      { actor: "ana@example.com", version: inv.version },
    );
    expect(found.ok).toBe(true);
    inv = await read("op-1");
    expect(inv).toMatchObject({
      status: "reconciled",
      commit_state: "committed",
      resolution: {
        by: "operator",
        actor: "ana@example.com",
        commit_state: "committed",
        note: "Stripe charge ch_123 exists",
      },
    });
    expect(inv.actions).toEqual([
      expect.objectContaining({
        action: "request_verification",
        actor: "ana@example.com",
        from_status: "outcome_unknown",
        to_status: "verifying",
        note: "please probe",
      }),
      expect.objectContaining({
        action: "record_verification",
        from_status: "verifying",
        to_status: "reconciled",
        note: "Stripe charge ch_123 exists",
      }),
    ]);
  });

  it("a stale version is refused with the current state, never overwritten", async () => {
    const inv = await read("op-2");
    const first = await actOnInvocation(
      t.db,
      { invocationId: "op-2" },
      { action: "escalate", note: "provider down" },
      { actor: "ana", version: inv.version },
    );
    expect(first.ok).toBe(true);
    const second = await actOnInvocation(
      t.db,
      { invocationId: "op-2" },
      { action: "mark_reconciled", commit_state: "not_committed", note: "no charge" },
      { actor: "bo", version: inv.version },
    );
    expect(second).toMatchObject({ ok: false, code: "VERSION_CONFLICT", current: { status: "escalated" } });
    expect((await read("op-2")).actions).toHaveLength(1);
  });

  it("a transition the table does not allow is refused and leaves no audit entry", async () => {
    const inv = await read("op-3");
    const res = await actOnInvocation(
      t.db,
      { invocationId: "op-3" },
      { action: "approve" },
      { actor: "ana", version: inv.version },
    );
    expect(res).toMatchObject({ ok: false, code: "TRANSITION_REFUSED" });
    expect((await read("op-3")).actions).toEqual([]);
  });

  it("evidence arriving after an operator's settlement that disagrees re-opens it with conflict", async () => {
    const inv = await read("op-3");
    const settled = await actOnInvocation(
      t.db,
      { invocationId: "op-3" },
      { action: "mark_reconciled", commit_state: "not_committed", note: "no charge in the ledger" },
      { actor: "ana", version: inv.version },
    );
    expect(settled.ok && settled.invocation.status).toBe("reconciled");
    await send([
      {
        event_id: "op-3-p1",
        task_id: "ord-1",
        invocation_id: "op-3",
        attempt: 1,
        phase: "probe",
        tool: "charge_card",
        effect_class: "money",
        at: "2026-11-29T05:10:00Z",
        envelope: { ok: true, commit_state: "committed" },
      },
    ]);
    expect(await read("op-3")).toMatchObject({
      status: "outcome_unknown",
      conflict: true,
      resolution: { by: "operator", commit_state: "not_committed" },
    });
  });
});
