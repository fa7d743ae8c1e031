import { describe, expect, it } from "vitest";
import {
  answerFor,
  canonicalJson,
  classifyCall,
  createGate,
  createSettleClient,
  decisionFields,
  defaultIdempotencyKey,
  formatAge,
  type Decision,
} from "../src/index.js";
import { createFakeSettle } from "./fake-settle.js";

// The framework adapters' common core (src/gate): how a call's result is read, what the model is told, the key.

const ctx = (effectClass: "read" | "money" = "money", unclassified = false) => ({
  tool: "create_refund",
  effectClass,
  attempt: 1,
  attemptId: "inv:a1",
  unclassified,
});

describe("classifyCall: what a tool did, as the envelope reported to Settle", () => {
  const unknown = { outcome: "unknown", effect_applied: "unknown" };
  const cases: Array<[string, Parameters<typeof classifyCall>[0], object]> = [
    ["a plain value", { kind: "returned", value: { id: "re_1" } }, { outcome: "ok", effect_applied: "yes" }],
    ["text", { kind: "returned", value: "Refund re_1 created" }, { outcome: "ok", effect_applied: "yes" }],
    [
      "success: false",
      { kind: "returned", value: { success: false, message: "declined" } },
      { ...unknown, message: "declined" },
    ],
    ["ok: false", { kind: "returned", value: { ok: false } }, { ...unknown, message: "ok: false" }],
    [
      "an error member",
      { kind: "returned", value: { error: { message: "timeout" } } },
      { ...unknown, message: "timeout" },
    ],
    [
      "JSON text with an error member",
      { kind: "returned", value: '{"error":"boom"}' },
      { ...unknown, message: "boom" },
    ],
    ["a throw", { kind: "threw", error: new Error("socket hang up") }, { ...unknown, message: "socket hang up" }],
    ["a timeout", { kind: "timed_out", afterMs: 300 }, unknown],
  ];
  it.each(cases)("a write: %s", (_name, result, expected) => {
    expect(classifyCall(result, ctx())).toMatchObject(expected);
  });

  it("a value in a dialect Settle reads is sent as it is (Settle decides)", () => {
    const seed001 = { code: "INVALID_AMOUNT", message: "no", retryable: false, hint: "h", field: "amount" };
    const problem = { type: "about:blank", title: "Too Many Requests", status: 429, retry_after: 1 };
    const partial = { outcome: "permanent", effect_applied: "partial", items: [] };
    for (const value of [seed001, problem, partial, JSON.stringify(seed001)])
      expect(classifyCall({ kind: "returned", value }, ctx())).toEqual(typeof value === "string" ? seed001 : value);
  });

  it("a failed read changed nothing; an unclassified tool is a write", () => {
    expect(classifyCall({ kind: "threw", error: new Error("x") }, ctx("read"))).toMatchObject({
      outcome: "retryable",
      effect_applied: "no",
    });
    expect(classifyCall({ kind: "threw", error: new Error("x") }, ctx("read", true))).toMatchObject(unknown);
  });
});

describe("what the model reads", () => {
  it("one plain sentence per refusal, with Settle's envelope beside it", () => {
    const facts = { tool: "create_refund", invocationId: "inv-1", idempotencyKey: "k", ageS: 14 };
    expect(answerFor("outcome_unknown", facts).text).toBe(
      "Not run: an identical create_refund call 14 s ago has an unknown outcome; Settle is checking it. Do not retry.",
    );
    expect(answerFor("already_committed", { ...facts, duplicate: true }).text).toBe(
      "Not run: the same create_refund call 14 s ago already took effect (sent again under a new key). Use its result; do not call it again.",
    );
    const rejected = answerFor("rejected", { ...facts, decidedBy: "ana@example.com", reply: "Refund at most 50 EUR" });
    expect(rejected.text).toBe(
      'Not run: create_refund was rejected by ana@example.com in Settle. They said: "Refund at most 50 EUR" Do not try it again; choose another way or ask the user.',
    );
    expect(rejected.envelope).toMatchObject({
      ok: false,
      code: "REJECTED",
      commit_state: "not_committed",
      invocation_id: "inv-1",
    });
    expect([5, 200, 7200, 200_000].map(formatAge)).toEqual(["5 s", "3 min", "2 h", "2 days"]);
  });

  it("a decision's fields are read in one place: approved arguments and a reply, when a decision carries them", () => {
    const decision = { invocation_id: "i", status: "approved", decision: "proceed", version: 3 } as Decision;
    expect(decisionFields(decision)).toEqual({});
    expect(decisionFields({ ...decision, approved_arguments: { amount: 50 }, reply: "only 50" } as Decision)).toEqual({
      arguments: { amount: 50 },
      reply: "only 50",
    });
  });
});

describe("the idempotency key", () => {
  it("is the same for the same arguments in any key order, and differs for other arguments", async () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"e":1,"f":2}]},"b":1}',
    );
    const one = await defaultIdempotencyKey("create_refund", { payment: "p", amount: 5 });
    expect(await defaultIdempotencyKey("create_refund", { amount: 5, payment: "p" })).toBe(one);
    expect(await defaultIdempotencyKey("create_refund", { amount: 6, payment: "p" })).not.toBe(one);
    expect(one).toMatch(/^create_refund:[0-9a-f]{40}$/);
  });
});

describe("createGate against an in-memory Settle", () => {
  const setup = (effects: Record<string, "read" | "create" | "money">) => {
    const fake = createFakeSettle();
    const client = createSettleClient({
      url: "http://settle.test",
      key: "k",
      fetch: fake.fetch,
      sleep: async () => {},
      maxRetries: 0,
    });
    return { fake, gate: createGate({ settle: client, taskId: "t1", effects }) };
  };

  it("a write runs after the guard (which writes its intent) and its outcome is reported", async () => {
    const { fake, gate } = setup({ create_refund: "money" });
    const seenBeforeRun: string[] = [];
    const first = await gate.run({ tool: "create_refund", args: { payment: "p" }, ctx: {} }, async (_args, info) => {
      seenBeforeRun.push(...fake.requests.map((r) => r.path));
      return info.attempt;
    });
    expect(first).toMatchObject({ kind: "ran", value: 1 });
    expect(seenBeforeRun).toEqual(["/api/v1/guard"]);
    expect(fake.requests[0]!.body).toMatchObject({
      task_id: "t1",
      tool: "create_refund",
      effect_class: "money",
      arguments: { payment: "p" },
    });
    expect(fake.records).toMatchObject([
      { phase: "outcome", attempt: 1, envelope: { outcome: "ok", effect_applied: "yes" } },
    ]);
  });

  it("a read is neither guarded nor recorded, and its error is the framework's to handle", async () => {
    const { fake, gate } = setup({ get_payment: "read" });
    const boom = new Error("down");
    expect(await gate.run({ tool: "get_payment", args: {}, ctx: {} }, async () => Promise.reject(boom))).toEqual({
      kind: "threw",
      error: boom,
      invocationId: null,
    });
    expect(fake.requests).toEqual([]);
  });

  it("Settle unreachable: a money write is not run; a create runs", async () => {
    const { fake, gate } = setup({ create_refund: "money", add_note: "create" });
    for (let i = 0; i < 4; i += 1) fake.faults.push({ path: "/api/v1/guard", fault: "unreachable" });
    let runs = 0;
    const refused = await gate.run({ tool: "create_refund", args: {}, ctx: {} }, async () => ++runs);
    expect(refused).toMatchObject({ kind: "answered", answer: { kind: "settle_unreachable" } });
    const ran = await gate.run({ tool: "add_note", args: {}, ctx: {} }, async () => ++runs);
    expect(ran).toMatchObject({ kind: "ran", value: 1 });
  });
});
