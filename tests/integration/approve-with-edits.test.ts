import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argsDigest } from "@/lib/write/args-digest";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { GET as auditGet } from "@/app/api/v1/audit/route";
import { getDecision, getInvocation, ingest, invocationActions } from "./routes";

// Approve with edits and a reply to the agent (docs/outcome-model.md §4): the approval binds to the edited
// arguments' digest, the decision carries them, a run with others is flagged; an edit holding a secret is
// refused; a rejection's or escalation's reply reaches the runtime through the decision API.

const ORIGINAL = { charge: "ch_1", amount: 100, currency: "EUR", reason: "damaged" };
const EDITED = { charge: "ch_1", amount: 50, currency: "EUR", reason: "damaged", ticket: "T-9" };

describe.each<Backend>(["postgres", "pglite"])("approve with edits; answer the agent, on %s", (backend) => {
  let t: TestContext;
  let ana: string;

  beforeAll(async () => {
    t = await openSettle(backend);
    ana = (await createOperator(t.db, "operator", "ana@example.com")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const decision = async (id: string) => (await call(getDecision, { key: t.key, params: { invocation_id: id } })).body;
  const act = async (id: string, body: object) =>
    call(invocationActions, {
      key: ana,
      params: { invocation_id: id },
      body: { version: (await read(id)).version, ...body },
    });
  const record = (id: string, attempt: number, args: object, envelope: object) => ({
    event_id: `${id}-${attempt}-${Math.random()}`,
    task_id: `task-${id}`,
    invocation_id: id,
    attempt,
    tool: "create_refund",
    effect_class: "money",
    idempotency_key: `key-${id}`,
    arguments: args,
    envelope,
  });
  const askApproval = async (id: string) => {
    const sent = await call(ingest, {
      key: t.key,
      body: {
        records: [
          record(id, 1, ORIGINAL, { ok: false, commit_state: "not_committed", next_action: "request_approval" }),
        ],
      },
    });
    expect(sent.body.rejected).toBe(0);
  };
  const run = (id: string, args: object) =>
    call(ingest, { key: t.key, body: { records: [record(id, 2, args, { ok: true, commit_state: "committed" })] } });

  it("binds the approval to the edited arguments, which the decision carries, and flags a run with any others", async () => {
    for (const id of ["edit-ran-edited", "edit-ran-original"]) {
      await askApproval(id);
      const approved = await act(id, { action: "approve", arguments: EDITED, note: "half, as agreed" });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({
        status: "approved",
        arguments_edit: { state: "approved", arguments: EDITED, by: "ana@example.com", digest: argsDigest(EDITED) },
      });
      // Who edited what: the audit entry keeps the diff of the two argument sets.
      expect(approved.body.actions.at(-1)).toMatchObject({
        action: "approve",
        actor: "ana@example.com",
        note: "half, as agreed",
        edit: {
          changes: [
            { path: "amount", before: 100, after: 50 },
            { path: "ticket", after: "T-9" },
          ],
        },
      });
      const [fold] = await t.db.driver.query<{ digest: string }>(
        "SELECT fold->>'approvedDigest' AS digest FROM invocations WHERE invocation_id = $1",
        [id],
      );
      expect(fold!.digest).toBe(argsDigest(EDITED));
      expect(await decision(id)).toMatchObject({ decision: "proceed", approved_arguments: EDITED, reply: null });
    }
    await run("edit-ran-edited", { ...EDITED });
    await run("edit-ran-original", ORIGINAL);
    expect(await read("edit-ran-edited")).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_review: null,
    });
    expect(await read("edit-ran-original")).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: true,
      arguments_review: "open",
    });
  });

  it("an edit equal to the call's own arguments (key order aside) is an approval as called", async () => {
    await askApproval("edit-same");
    const { charge, amount, currency, reason } = ORIGINAL;
    const approved = await act("edit-same", { action: "approve", arguments: { reason, currency, amount, charge } });
    expect(approved.body).toMatchObject({ status: "approved", arguments_edit: null });
    expect(approved.body.actions.at(-1).edit).toBeUndefined();
    expect(await decision("edit-same")).toMatchObject({ decision: "proceed", approved_arguments: null });
  });

  it("refuses an edit that holds a redacted or a secret-looking value, and changes nothing", async () => {
    await askApproval("edit-secret");
    const before = await read("edit-secret");
    for (const args of [
      { ...EDITED, api_key: "[redacted]" },
      { ...EDITED, password: "hunter2-hunter2" },
      { ...EDITED, note: "Authorization: Bearer sk_live_51HxXxXxXxXxXxXxXxXxXxXx" },
    ]) {
      const refused = await act("edit-secret", { action: "approve", arguments: args });
      expect(refused.status, JSON.stringify(args)).toBe(400);
      expect(refused.body.code).toBe("INVALID_REQUEST");
    }
    expect(await read("edit-secret")).toMatchObject({ status: "awaiting_approval", version: before.version });
  });

  it("a rejection's and an escalation's reply reach the runtime through the decision API", async () => {
    await askApproval("reply-reject");
    const reply = "Refund at most 50 EUR; ask the customer";
    expect((await act("reply-reject", { action: "reject", reply, note: "too much" })).status).toBe(200);
    expect(await decision("reply-reject")).toMatchObject({ decision: "abandon", reply, approved_arguments: null });
    expect((await read("reply-reject")).actions.at(-1)).toMatchObject({ action: "reject", reply, note: "too much" });

    await askApproval("reply-escalate");
    await act("reply-escalate", { action: "escalate", note: "a manager decides", reply: "A manager will decide." });
    expect(await decision("reply-escalate")).toMatchObject({
      status: "escalated",
      decision: "wait",
      reply: "A manager will decide.",
    });
    // A record that moves the status on hides the reply: it belonged to that decision.
    await run("reply-escalate", ORIGINAL);
    expect(await decision("reply-escalate")).toMatchObject({ reply: null });
  });

  it("the audit trail (page and CSV) shows who edited what and the reply sent", async () => {
    await askApproval("audit-edit");
    await act("audit-edit", { action: "approve", arguments: EDITED, note: "half" });
    await askApproval("audit-reply");
    await act("audit-reply", { action: "reject", reply: "Ask the customer first." });
    const page = await call(auditGet, { key: ana, path: "/api/v1/audit?limit=200" });
    expect(page.status).toBe(200);
    const entry = (id: string, action: string) =>
      page.body.items.find(
        (e: { invocation_id: string; action: string }) => e.invocation_id === id && e.action === action,
      );
    expect(entry("audit-edit", "approve")).toMatchObject({
      note: "half",
      reply: null,
      edit: {
        changes: [
          { path: "amount", before: 100, after: 50 },
          { path: "ticket", after: "T-9" },
        ],
      },
    });
    expect(entry("audit-reply", "reject")).toMatchObject({ reply: "Ask the customer first.", edit: null });
    const csv = await call(auditGet, { key: ana, path: "/api/v1/audit?format=csv" });
    const text = csv.body as string;
    expect(text.split("\r\n")[0]).toMatch(/,reply,edit$/);
    expect(text).toContain(`,Ask the customer first.,\r\n`);
    expect(text).toContain(
      `"[{""path"":""amount"",""before"":100,""after"":50},{""path"":""ticket"",""after"":""T-9""}]"`,
    );
  });
});
