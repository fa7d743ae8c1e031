import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGate, createSettleClient, type SettleClient } from "@settle/client";
import { actOnInvocation } from "@/lib/invocations/act";
import type { OperatorAction } from "@/lib/outcome/actions";
import { call, openSettle, type TestContext } from "./harness";
import { routeFetch } from "./route-fetch";
import { getInvocation } from "./routes";

// @settle/client against Settle's real route handlers and database (docs/outcome-model.md §4): a person approves a
// held call with edited arguments, the tool runs with exactly those, once, and Settle flags nothing; a rejection's
// reply is what the model reads. wrapTool and the gate (the framework adapters' core) both.

const ORIGINAL = { payment: "pay_1", amount: 100, currency: "EUR" };
const EDITED = { payment: "pay_1", amount: 50, currency: "EUR", note: "half, as agreed" };
const HELD = {
  ok: false,
  code: "APPROVAL_REQUIRED",
  commit_state: "not_committed",
  next_action: "request_approval",
  retry: { directive: "never", not_before: null, max_attempts_remaining: null },
};

describe("@settle/client follows approve with edits and a reply, on a real Settle", () => {
  let t: TestContext;
  let settle: SettleClient;
  beforeAll(async () => {
    t = await openSettle("postgres");
    settle = createSettleClient({ url: "http://settle.test", key: t.key, fetch: routeFetch, batchDelayMs: 1 });
  });
  afterAll(async () => {
    await t?.teardown();
  });

  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;

  /** Acts as a person in the console once the invocation awaits approval. */
  async function decideWhenHeld(id: string, action: OperatorAction) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const rows = await t.db.driver.query<{ status: string; version: number }>(
        "SELECT status, version FROM invocations WHERE invocation_id = $1",
        [id],
      );
      if (rows[0]?.status === "awaiting_approval") {
        const done = await actOnInvocation(t.db, { invocationId: id }, action, {
          actor: "ana@example.com",
          version: rows[0].version,
        });
        expect(done.ok).toBe(true);
        return;
      }
      if (Date.now() > deadline) throw new Error(`${id} never awaited approval`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("wrapTool: approved with edits, the tool runs once more with the approved arguments; nothing is flagged", async () => {
    const ran: unknown[] = [];
    const refund = settle.wrapTool(
      async (args: Record<string, unknown>) => {
        ran.push(args);
        return ran.length === 1 ? HELD : { id: "re_1", amount: args.amount };
      },
      {
        tool: "create_refund",
        effectClass: "money",
        taskId: "wrap-edit",
        idempotencyKey: "refund-pay_1",
        classify: (r) => (r.kind === "returned" && r.value === HELD ? HELD : { outcome: "ok", effect_applied: "yes" }),
      },
    );
    const [run] = await Promise.all([
      refund(ORIGINAL),
      decideWhenHeld("wrap-edit:refund-pay_1", { action: "approve", arguments: EDITED }),
    ]);
    expect(ran).toEqual([ORIGINAL, EDITED]);
    expect(run).toMatchObject({ status: "done", value: { amount: 50 }, approvedArguments: EDITED, calls: 2 });
    expect(await read(run.invocationId)).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_review: null,
      arguments_edit: { state: "approved", arguments: EDITED },
    });
  });

  it("wrapTool: rejected with a reply, the run ends abandoned with the reply", async () => {
    const reply = "Refund at most 50 EUR; ask the customer";
    const refund = settle.wrapTool(async () => HELD, {
      tool: "create_refund",
      effectClass: "money",
      taskId: "wrap-reply",
      idempotencyKey: "refund-pay_2",
      classify: () => HELD,
    });
    const [run] = await Promise.all([
      refund({ ...ORIGINAL, payment: "pay_2" }),
      decideWhenHeld("wrap-reply:refund-pay_2", { action: "reject", reply }),
    ]);
    expect(run).toMatchObject({ status: "abandoned", reply, calls: 1 });
  });

  const gateFor = (taskId: string) =>
    createGate({
      settle,
      taskId,
      effects: { create_refund: "money" },
      approvals: ["money"],
      approvalWaitMs: 20_000,
      idempotencyKey: () => `refund-${taskId}`,
    });

  it("the gate: approved with edits while held, the tool runs with the approved arguments, once; nothing is flagged", async () => {
    // Another payment than wrapTool's: the same arguments under another key would be held as a possible duplicate.
    const original = { ...ORIGINAL, payment: "pay_3" };
    const edited = { ...EDITED, payment: "pay_3" };
    const ran: unknown[] = [];
    const [result] = await Promise.all([
      gateFor("gate-edit").run({ tool: "create_refund", args: original, ctx: {} }, async (args) => {
        ran.push(args);
        return { id: "re_3" };
      }),
      decideWhenHeld("gate-edit:refund-gate-edit", { action: "approve", arguments: edited }),
    ]);
    expect(result, JSON.stringify(result)).toMatchObject({ kind: "ran", value: { id: "re_3" } });
    expect(ran).toEqual([edited]);
    expect(await read("gate-edit:refund-gate-edit")).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_edit: { state: "approved", arguments: edited },
    });
  });

  it("the gate: a rejection's reply is the tool's result the model reads; the tool never runs", async () => {
    const reply = "Refund at most 50 EUR; ask the customer";
    let runs = 0;
    const [result] = await Promise.all([
      gateFor("gate-reply").run({ tool: "create_refund", args: ORIGINAL, ctx: {} }, async () => ++runs),
      decideWhenHeld("gate-reply:refund-gate-reply", { action: "reject", reply }),
    ]);
    expect(result).toMatchObject({ kind: "answered" });
    expect(result.kind === "answered" && result.answer.text).toBe(
      `Not run: create_refund was rejected by ana@example.com in Settle. They said: "${reply}" Do not try it again; choose another way or ask the user.`,
    );
    expect(runs).toBe(0);
  });
});
