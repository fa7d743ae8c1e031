import { describe, expect, it } from "vitest";
import { createGate, createSettleClient, type GuardInput } from "../src/index.js";
import { createFakeSettle, type FakeSettle } from "./fake-settle.js";

// Approve with edits and a reply to the agent (docs/outcome-model.md §4), as the client follows them: a decision to
// proceed with approved arguments runs the tool with exactly those (and the intent says so, so Settle flags
// nothing); a rejection's or an escalation's reply is what the model reads.

const held = { ok: false, commit_state: "not_committed", next_action: "request_approval", code: "APPROVAL_REQUIRED" };
const EDITED = { sku: "b", quantity: 1 };

function client(settle: FakeSettle) {
  return createSettleClient({ url: "http://settle.test", key: "k", fetch: settle.fetch, sleep: async () => {} });
}

/** Does `then` once the invocation's status is `status` (a person acting in the console). */
function when(settle: FakeSettle, id: string, status: string, then: () => void) {
  const timer = setInterval(() => {
    if (settle.decisions.get(id)?.status !== status) return;
    clearInterval(timer);
    then();
  }, 5);
}

describe("wrapTool: a person's decision on a call that waits for approval", () => {
  const options = { tool: "create_order", effectClass: "money" as const, taskId: "ord-1", idempotencyKey: "key-1" };
  /** A tool that asks for approval on its first call and orders on the next. */
  const ordering = (calls: unknown[]) => async (order: unknown) => {
    calls.push(order);
    return calls.length === 1 ? held : { id: "order-1" };
  };
  const classify = (r: { kind: string; value?: unknown }) =>
    r.value === held ? held : { outcome: "ok", effect_applied: "yes" };

  it("approved with edits: the tool runs again with the approved arguments, which its intent carries", async () => {
    const settle = createFakeSettle();
    const calls: unknown[] = [];
    const asked: unknown[] = [];
    const allow = settle.guard;
    settle.guard = (input) => (asked.push(input.arguments), allow(input));
    const run = client(settle).wrapTool(ordering(calls), { ...options, classify });
    when(settle, "ord-1:key-1", "awaiting_approval", () =>
      settle.setDecision("ord-1:key-1", { status: "approved", decision: "proceed", approved_arguments: EDITED }),
    );
    const done = await run({ sku: "a", quantity: 3 });
    // The guard before the second call is asked with what the tool runs with (a guard recording the call's own
    // arguments after the approval would make the call look unlike what was approved).
    expect(asked).toEqual([{ sku: "a", quantity: 3 }, EDITED]);
    expect(calls).toEqual([{ sku: "a", quantity: 3 }, EDITED]);
    expect(done).toMatchObject({ status: "done", calls: 2, approvedArguments: EDITED, reply: null });
    const intents = settle.records.filter((r) => r.phase === "intent") as Array<{ arguments?: unknown }>;
    expect(intents.map((r) => r.arguments)).toEqual([{ sku: "a", quantity: 3 }, EDITED]);
  });

  it("approved as called: the call's own arguments", async () => {
    const settle = createFakeSettle();
    const calls: unknown[] = [];
    const run = client(settle).wrapTool(ordering(calls), { ...options, classify });
    when(settle, "ord-1:key-1", "awaiting_approval", () =>
      settle.setDecision("ord-1:key-1", { status: "approved", decision: "proceed", approved_arguments: null }),
    );
    expect(await run({ sku: "a" })).toMatchObject({ status: "done", approvedArguments: null });
    expect(calls).toEqual([{ sku: "a" }, { sku: "a" }]);
  });

  it("rejected with a reply: not run again; the run carries the reply for the model", async () => {
    const settle = createFakeSettle();
    const calls: unknown[] = [];
    const run = client(settle).wrapTool(ordering(calls), { ...options, classify });
    const reply = "Order at most one; ask the customer";
    when(settle, "ord-1:key-1", "awaiting_approval", () =>
      settle.setDecision("ord-1:key-1", { status: "rejected", decision: "abandon", reply }),
    );
    expect(await run({ sku: "a" })).toMatchObject({ status: "abandoned", reply, calls: 1 });
    expect(calls).toHaveLength(1);
  });

  it("escalated with a reply: unresolved when the wait runs out, with the reply", async () => {
    const settle = createFakeSettle();
    const run = client(settle).wrapTool(ordering([]), { ...options, classify, decisionTimeoutMs: 300 });
    const reply = "A manager will decide.";
    when(settle, "ord-1:key-1", "awaiting_approval", () =>
      settle.setDecision("ord-1:key-1", { status: "escalated", decision: "wait", reply }),
    );
    expect(await run({ sku: "a" })).toMatchObject({ status: "unresolved", reply, calls: 1 });
  });
});

describe("the gate (framework adapters): a person's decision while the call is held", () => {
  const call = { tool: "create_refund", args: { payment: "p", amount: 100 }, ctx: {} };
  const id = "t1:refund-p";
  function setup() {
    const settle = createFakeSettle();
    const guards: GuardInput[] = [];
    settle.guard = (input) => {
      guards.push(input);
      return { allow: true, reason: null, invocation_id: id, attempt: guards.length };
    };
    const gate = createGate({
      settle: client(settle),
      taskId: "t1",
      effects: { create_refund: "money" },
      idempotencyKey: () => "refund-p",
      approvals: ["money"],
      approvalWaitMs: 5_000,
    });
    return { settle, gate, guards };
  }

  it("approved with edits: the guard is asked with the approved arguments and the tool runs with them, once", async () => {
    const { settle, gate, guards } = setup();
    const edited = { payment: "p", amount: 50 };
    when(settle, id, "awaiting_approval", () =>
      settle.setDecision(id, { status: "approved", decision: "proceed", approved_arguments: edited }),
    );
    const ran: unknown[] = [];
    const result = await gate.run(call, async (args) => {
      ran.push(args);
      return { id: "re_1" };
    });
    expect(result).toMatchObject({ kind: "ran", value: { id: "re_1" } });
    expect(ran).toEqual([edited]);
    expect(guards.map((g) => (g as { arguments?: unknown }).arguments)).toEqual([call.args, edited]);
  });

  it("rejected or escalated with a reply: the model reads the reply in the tool's result; the tool never runs", async () => {
    for (const [status, decision, kind] of [
      ["rejected", "abandon", /^Not run: create_refund was rejected by ana@example\.com in Settle\. They said: /],
      ["escalated", "wait", /^Not run: create_refund was escalated by ana@example\.com in Settle and waits /],
    ] as const) {
      const { settle, gate } = setup();
      const reply = "Refund at most 50 EUR; ask the customer";
      when(settle, id, "awaiting_approval", () =>
        settle.setDecision(id, { status, decision, reply, decided_by: "ana@example.com" }),
      );
      let runs = 0;
      const result = await gate.run(call, async () => ++runs);
      expect(result.kind).toBe("answered");
      const text = result.kind === "answered" ? result.answer.text : "";
      expect(text).toMatch(kind);
      expect(text).toContain(`"${reply}"`);
      expect(runs).toBe(0);
    }
  });
});
