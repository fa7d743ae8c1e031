import { describe, expect, it } from "vitest";
import { approvedIdentity, canonicalJson, digestArguments, identify, resolveTask } from "../src/identity.js";

// The key is the intent: the same tool and arguments in any order are one
// call; a rule's key_args keep a timestamp or a nonce out of it.

describe("approvedIdentity (approve with edits)", () => {
  it("keeps the key and digests and sends the approved arguments as the call's own, without the idempotency_arg", () => {
    const rule = { match: "create_order", idempotency_arg: "idempotency_key" };
    const call = identify("create_order", { customer: "ana", qty: 5, idempotency_key: "model-1" }, "t", rule);
    const approved = approvedIdentity(call, { customer: "ana", qty: 2, idempotency_key: "typed-by-a-person" }, rule);
    expect(approved.idempotencyKey).toBe(call.idempotencyKey);
    expect(approved.arguments).toEqual({ customer: "ana", qty: 2 });
    expect(approved.argsDigest).toBe(digestArguments({ qty: 2, customer: "ana" }));
    expect(approved.argsDigest).not.toBe(call.argsDigest);
    // A rule that keeps the arguments here: the digest alone, still of the approved arguments.
    const quiet = { ...rule, send_arguments: false };
    expect(approvedIdentity(call, { customer: "ana", qty: 2 }, quiet)).toMatchObject({
      arguments: null,
      argsDigest: approved.argsDigest,
    });
  });
});

describe("identify", () => {
  it("gives the same key to the same arguments in another order, and another key to other arguments", () => {
    const a = identify("create_order", { customer: "ana", items: [{ sku: "A", qty: 1 }] }, "t-1", null);
    const b = identify("create_order", { items: [{ qty: 1, sku: "A" }], customer: "ana" }, "t-2", null);
    const c = identify("create_order", { customer: "ben", items: [{ sku: "A", qty: 1 }] }, "t-1", null);
    expect(a.idempotencyKey).toBe(b.idempotencyKey);
    expect(a.idempotencyKey).toMatch(/^mcp:create_order:[0-9a-f]{32}$/);
    expect(c.idempotencyKey).not.toBe(a.idempotencyKey);
    expect(
      identify("cancel_order", { customer: "ana", items: [{ sku: "A", qty: 1 }] }, "t-1", null).idempotencyKey,
    ).not.toBe(a.idempotencyKey);
  });

  it("keys only the arguments a rule names, so a fresh timestamp is still the same intent; the digest covers them all", () => {
    const rule = { match: "send_email", key_args: ["to", "template.id"] };
    const a = identify(
      "send_email",
      { to: "ana@example.com", template: { id: "welcome" }, sent_at: "2026-12-01T10:00:00Z" },
      "t",
      rule,
    );
    const b = identify(
      "send_email",
      { to: "ana@example.com", template: { id: "welcome" }, sent_at: "2026-12-01T10:00:07Z" },
      "t",
      rule,
    );
    expect(a.idempotencyKey).toBe(b.idempotencyKey);
    expect(a.argsDigest).not.toBe(b.argsDigest);
  });

  it("takes a business key a rule spells out from the arguments, and falls back to the digest when one is missing", () => {
    const rule = { match: "charge_card", key: "charge:{{args.order_id}}" };
    expect(identify("charge_card", { order_id: "ord-7", amount_cents: 100 }, "t", rule).idempotencyKey).toBe(
      "charge:ord-7",
    );
    expect(identify("charge_card", { order_id: "ord-7", amount_cents: 250 }, "t", rule).idempotencyKey).toBe(
      "charge:ord-7",
    );
    expect(identify("charge_card", { amount_cents: 250 }, "t", rule).idempotencyKey).toMatch(/^mcp:charge_card:/);
    expect(
      identify("charge_card", { order_id: "ord-7" }, "task-9", { ...rule, key_scope: "task" as const }).idempotencyKey,
    ).toBe("task-9:charge:ord-7");
  });

  it("scopes the key to the task only when the rule says so", () => {
    const args = { to: "ana@example.com" };
    expect(identify("send_email", args, "t-1", null).idempotencyKey).toBe(
      identify("send_email", args, "t-2", null).idempotencyKey,
    );
    const perTask = { match: "send_email", key_scope: "task" as const };
    expect(identify("send_email", args, "t-1", perTask).idempotencyKey).not.toBe(
      identify("send_email", args, "t-2", perTask).idempotencyKey,
    );
  });

  it("writes canonical JSON: sorted keys, undefined fields left out", () => {
    expect(canonicalJson({ b: 1, a: [true, null, { d: undefined, c: "x" }] })).toBe(
      '{"a":[true,null,{"c":"x"}],"b":1}',
    );
  });
});

describe("resolveTask", () => {
  const sources = {
    sources: ["meta", "header", "session"] as Array<"meta" | "header" | "session">,
    meta_key: "settle.dev/task_id",
    header: "Settle-Task-Id",
  };

  it("takes the first source that has a task: the request's _meta, then the header, then the session", () => {
    expect(
      resolveTask(sources, {
        meta: { "settle.dev/task_id": "order-42" },
        headers: { "settle-task-id": "h" },
        sessionTask: "s",
      }),
    ).toBe("order-42");
    expect(resolveTask(sources, { meta: {}, headers: { "settle-task-id": "from-header" }, sessionTask: "s" })).toBe(
      "from-header",
    );
    expect(
      resolveTask(sources, { meta: { "settle.dev/task_id": "  " }, headers: undefined, sessionTask: "session-1" }),
    ).toBe("session-1");
  });

  it("never reads a source left out of the list", () => {
    expect(
      resolveTask(
        { ...sources, sources: ["session"] },
        { meta: { "settle.dev/task_id": "x" }, headers: undefined, sessionTask: "s" },
      ),
    ).toBe("s");
  });
});
