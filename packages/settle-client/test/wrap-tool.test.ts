import { describe, expect, it } from "vitest";
import { createSettleClient, type ToolCall } from "../src/index.js";
import { createFakeSettle, type FakeSettle } from "./fake-settle.js";

// wrapTool against the in-memory Settle: the order of what is sent and done,
// and that the tool is called again only after Settle allows it.

type Order = { sku: string };

function setup() {
  const settle = createFakeSettle();
  /** Everything in order: requests to Settle and calls of the tool. */
  const log: string[] = [];
  const client = createSettleClient({
    url: "http://settle.test",
    key: "stl_rk_test",
    sleep: async () => {},
    fetch: async (input, init) => {
      const body =
        typeof init?.body === "string" ? (JSON.parse(init.body) as { records?: Array<{ phase: string }> }) : null;
      log.push(
        body?.records
          ? `post ${body.records.map((r) => r.phase).join(",")}`
          : `${init?.method ?? "GET"} ${new URL(input).pathname.split("/").pop()}`,
      );
      return settle.fetch(input, init);
    },
  });
  return { settle, client, log };
}

const options = { tool: "create_order", effectClass: "create" as const, taskId: "ord-1", idempotencyKey: "key-1" };

const decisionsSeen = (settle: FakeSettle) => settle.records.filter((r) => r.phase !== "intent").map((r) => r.phase);

describe("wrapTool", () => {
  it("guard, intent before the call, outcome after it, done; event ids are deterministic per attempt and phase", async () => {
    const { settle, client, log } = setup();
    const calls: ToolCall[] = [];
    const create = client.wrapTool(async (order: Order, call) => {
      calls.push(call);
      log.push("tool");
      return { id: `order-${order.sku}` };
    }, options);
    const run = await create({ sku: "a" });
    expect(run).toMatchObject({
      status: "done",
      value: { id: "order-a" },
      calls: 1,
      invocationId: "ord-1:key-1",
      decision: { decision: "do_not_retry" },
    });
    expect(log).toEqual(["POST guard", "post intent", "tool", "post outcome", "GET decision"]);
    expect(settle.requests[0]!.body).toMatchObject({
      task_id: "ord-1",
      tool: "create_order",
      idempotency_key: "key-1",
      effect_class: "create",
    });
    expect(calls[0]).toMatchObject({ idempotencyKey: "key-1", invocationId: "ord-1:key-1", attempt: 1 });
    expect(settle.records.map((r) => r.event_id)).toEqual(["ord-1:key-1:a1:intent", "ord-1:key-1:a1:outcome"]);
    expect(settle.records[0]).toMatchObject({
      task_id: "ord-1",
      tool: "create_order",
      effect_class: "create",
      idempotency_key: "key-1",
      attempt: 1,
    });
  });

  it("sends the call's arguments to the guard and with its intent, unless the tool says not to; never a non-object", async () => {
    const { settle, client } = setup();
    const asked: unknown[] = [];
    settle.guard = (input) => (
      asked.push(input.arguments),
      { allow: true, reason: null, invocation_id: "i", attempt: 1 }
    );
    await client.wrapTool(async (order: Order) => ({ id: order.sku }), options)({ sku: "a" });
    const intent = settle.records.find((r) => r.phase === "intent") as { arguments?: unknown };
    expect(intent.arguments).toEqual({ sku: "a" });
    // The guard holds a write under a new key against the same call (decision 028) only if it sees the arguments.
    expect(asked).toEqual([{ sku: "a" }]);

    const quiet = setup();
    const quietAsked: unknown[] = [];
    quiet.settle.guard = (input) => (
      quietAsked.push(input.arguments),
      { allow: true, reason: null, invocation_id: "q", attempt: 1 }
    );
    await quiet.client.wrapTool(async (order: Order) => ({ id: order.sku }), { ...options, sendArguments: false })({
      sku: "b",
    });
    expect((quiet.settle.records.find((r) => r.phase === "intent") as { arguments?: unknown }).arguments).toBe(
      undefined,
    );
    expect(quietAsked).toEqual([undefined]);

    const scalar = setup();
    await scalar.client.wrapTool(async (sku: string) => ({ id: sku }), options)("c");
    expect((scalar.settle.records.find((r) => r.phase === "intent") as { arguments?: unknown }).arguments).toBe(
      undefined,
    );
  });

  it("unknown outcome, probe finds the effect: no second call, done with what the probe found", async () => {
    const { settle, client } = setup();
    let calls = 0;
    const create = client.wrapTool(
      async () => {
        calls += 1;
        throw new Error("connection reset after the request was sent");
      },
      { ...options, probe: async () => ({ found: true, value: { id: "order-a" } }) },
    );
    const run = await create({ sku: "a" });
    expect(calls).toBe(1);
    expect(run).toMatchObject({
      status: "done",
      value: { id: "order-a" },
      decision: { decision: "do_not_retry", status: "reconciled" },
    });
    expect(settle.records[1]!.envelope).toMatchObject({
      outcome: "unknown",
      effect_applied: "unknown",
      message: "connection reset after the request was sent",
    });
    expect(settle.records[2]).toMatchObject({
      phase: "probe",
      attempt: 1,
      envelope: { outcome: "ok", effect_applied: "yes" },
    });
  });

  it("unknown outcome, probe finds nothing: the tool is called again only after retry_allowed, with the same key", async () => {
    const { settle, client, log } = setup();
    const keys: string[] = [];
    const create = client.wrapTool(
      async (_: Order, call) => {
        keys.push(call.idempotencyKey);
        log.push(`tool a${call.attempt}`);
        if (call.attempt === 1) throw new Error("timed out");
        return { id: "order-a" };
      },
      { ...options, probe: async () => ({ found: false }) },
    );
    const run = await create({ sku: "a" });
    expect(run).toMatchObject({ status: "done", calls: 2, value: { id: "order-a" } });
    expect(keys).toEqual(["key-1", "key-1"]);
    const secondCall = log.indexOf("tool a2");
    expect(log.slice(0, secondCall)).toEqual([
      "POST guard",
      "post intent",
      "tool a1",
      "post outcome",
      "GET decision",
      "post probe",
      "GET decision",
      "POST guard",
      "post intent",
    ]);
    expect(settle.records.map((r) => r.event_id)).toEqual([
      "ord-1:key-1:a1:intent",
      "ord-1:key-1:a1:outcome",
      "ord-1:key-1:a1:probe:v2",
      "ord-1:key-1:a2:intent",
      "ord-1:key-1:a2:outcome",
    ]);
  });

  it("unknown outcome without a probe: waits for a person and never calls again; unresolved when the wait runs out", async () => {
    const { client } = setup();
    let calls = 0;
    const create = client.wrapTool(
      async () => {
        calls += 1;
        throw new Error("504");
      },
      { ...options, decisionTimeoutMs: 300 },
    );
    const run = await create({ sku: "a" });
    expect(calls).toBe(1);
    expect(run).toMatchObject({ status: "unresolved", decision: { decision: "wait", status: "outcome_unknown" } });
  });

  it("follows an operator's verdict that arrives while it waits", async () => {
    const { settle, client } = setup();
    let calls = 0;
    const create = client.wrapTool(async () => {
      calls += 1;
      if (calls === 1) throw new Error("504");
      return "sent";
    }, options);
    setTimeout(
      () =>
        settle.setDecision("ord-1:key-1", {
          status: "reconciled",
          decision: "retry_allowed",
          commit_state: "not_committed",
          decided_by: "ana",
        }),
      100,
    );
    const run = await create({ sku: "a" });
    expect(run).toMatchObject({ status: "done", calls: 2, value: "sent" });
  });

  it("the operator asks to verify: it probes again, even after a probe that failed", async () => {
    const { settle, client } = setup();
    let probes = 0;
    const create = client.wrapTool(
      async () => {
        throw new Error("reset");
      },
      {
        ...options,
        probe: async () => {
          probes += 1;
          if (probes === 1) throw new Error("lookup endpoint down");
          return { found: true };
        },
      },
    );
    setTimeout(() => settle.setDecision("ord-1:key-1", { status: "verifying", decision: "verify" }), 100);
    const run = await create({ sku: "a" });
    expect(probes).toBe(2);
    expect(decisionsSeen(settle)).toEqual(["outcome", "probe", "probe"]);
    expect(settle.records[2]!.envelope).toMatchObject({
      outcome: "unknown",
      message: "probe failed: lookup endpoint down",
    });
    expect(run).toMatchObject({ status: "done", calls: 1 });
  });

  it("the guard says it is already committed: the tool is not called", async () => {
    const { settle, client } = setup();
    await client.report({
      event_id: "x",
      task_id: "ord-1",
      invocation_id: "ord-1:key-1",
      tool: "create_order",
      envelope: { outcome: "ok", effect_applied: "yes" },
    });
    settle.guard = (input) => ({
      allow: false,
      reason: "already_committed",
      invocation_id: `${input.task_id}:${input.idempotency_key}`,
      attempt: 1,
    });
    let calls = 0;
    const run = await client.wrapTool(async () => {
      calls += 1;
    }, options)({});
    expect(calls).toBe(0);
    expect(run).toMatchObject({ status: "done", calls: 0, decision: { decision: "do_not_retry" } });
  });

  it("the guard says another call is in flight: neither the tool nor the probe is called while it is", async () => {
    const { settle, client } = setup();
    await client.report({
      event_id: "other:a1:intent",
      task_id: "ord-1",
      invocation_id: "ord-1:key-1",
      attempt: 1,
      phase: "intent",
      tool: "create_order",
    });
    settle.guard = (input) => ({
      allow: false,
      reason: "in_flight",
      invocation_id: `${input.task_id}:${input.idempotency_key}`,
      attempt: 1,
    });
    let calls = 0;
    let probes = 0;
    const create = client.wrapTool(
      async () => {
        calls += 1;
      },
      {
        ...options,
        decisionTimeoutMs: 300,
        probe: async () => {
          probes += 1;
          return { found: false };
        },
      },
    );
    const run = await create({});
    expect({ calls, probes }).toEqual({ calls: 0, probes: 0 });
    expect(run).toMatchObject({ status: "unresolved", calls: 0, decision: { status: "pending", decision: "wait" } });
  });

  it("asks the guard again before a retry: when another worker holds the key, it waits instead of calling", async () => {
    const { settle, client } = setup();
    let guards = 0;
    settle.guard = (input) => {
      guards += 1;
      return {
        allow: guards === 1,
        reason: guards === 1 ? null : "in_flight",
        invocation_id: input.invocation_id ?? `${input.task_id}:${input.idempotency_key}`,
        attempt: 1,
      };
    };
    let calls = 0;
    const create = client.wrapTool(
      async () => {
        calls += 1;
        throw new Error("reset");
      },
      { ...options, decisionTimeoutMs: 300, probe: async () => ({ found: false }) },
    );
    const run = await create({});
    expect(calls).toBe(1);
    expect(guards).toBe(2);
    // The retry names its invocation, so the guard judges that one.
    expect(settle.requests.filter((r) => r.path === "/api/v1/guard").at(-1)!.body).toMatchObject({
      invocation_id: "ord-1:key-1",
    });
    expect(run).toMatchObject({ status: "unresolved", calls: 1, decision: { decision: "retry_allowed" } });
  });

  it("the intent cannot be written: the tool is never called", async () => {
    const { settle, client } = setup();
    for (let i = 0; i < 6; i += 1) settle.faults.push({ path: "/api/v1/envelopes", fault: "unreachable" });
    let calls = 0;
    const create = client.wrapTool(async () => {
      calls += 1;
    }, options);
    await expect(create({})).rejects.toMatchObject({ code: "UNREACHABLE" });
    expect(calls).toBe(0);
  });

  it("a call past its budget is recorded unknown, its signal aborts, and it is not called again", async () => {
    const { settle, client } = setup();
    let signal: AbortSignal | null = null;
    let calls = 0;
    const create = client.wrapTool(
      (_: unknown, call) => {
        calls += 1;
        signal = call.signal;
        return new Promise<string>(() => {});
      },
      { ...options, timeoutMs: 50, decisionTimeoutMs: 100 },
    );
    const run = await create({});
    expect(calls).toBe(1);
    expect(signal!.aborted).toBe(true);
    expect(settle.records[0]).toMatchObject({ phase: "intent", budget_left_s: 1 });
    expect(settle.records[1]!.envelope).toMatchObject({
      outcome: "unknown",
      message: "no answer within 50 ms; the call may still complete",
    });
    expect(run.status).toBe("unresolved");
  });

  it("an earlier run used attempt 1 (its intent comes back duplicate on first delivery): this run numbers its attempt 2", async () => {
    const { settle, client } = setup();
    await client.report([
      {
        event_id: "ord-1:key-1:a1:intent",
        task_id: "ord-1",
        invocation_id: "ord-1:key-1",
        attempt: 1,
        phase: "intent",
        tool: "create_order",
      },
      {
        event_id: "ord-1:key-1:a1:outcome",
        task_id: "ord-1",
        invocation_id: "ord-1:key-1",
        attempt: 1,
        tool: "create_order",
        envelope: { outcome: "retryable", effect_applied: "no" },
      },
    ]);
    const attempts: number[] = [];
    const run = await client.wrapTool(async (_: unknown, call) => {
      attempts.push(call.attempt);
      return "ok";
    }, options)({});
    expect(attempts).toEqual([2]);
    expect(run.status).toBe("done");
    expect(settle.records.slice(2).map((r) => r.event_id)).toEqual(["ord-1:key-1:a2:intent", "ord-1:key-1:a2:outcome"]);
  });

  it("a lost answer to the outcome post is resent with the same event id; Settle keeps one", async () => {
    const { settle, client } = setup();
    settle.faults.push(
      { path: "/api/v1/envelopes", fault: "lose_answer" },
      { path: "/api/v1/envelopes", fault: "lose_answer" },
    );
    const run = await client.wrapTool(async () => "ok", options)({});
    expect(run.status).toBe("done");
    expect(settle.records.map((r) => r.event_id)).toEqual(["ord-1:key-1:a1:intent", "ord-1:key-1:a1:outcome"]);
  });
});
