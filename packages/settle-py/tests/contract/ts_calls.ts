// The TypeScript half of the contract test (test_contract.py): the same calls, in the same order, as
// python_calls in that file, made with @settle/client against the fake Settle at argv[2].
//   node --import tsx packages/settle-py/tests/contract/ts_calls.ts http://127.0.0.1:PORT
import { createSettleClient } from "@settle/client";

const url = process.argv[2];
if (!url) throw new Error("usage: ts_calls.ts <fake Settle url>");
const settle = createSettleClient({ url, key: "stl_rk_contract", sleep: async () => {} });
const base = { tool: "create_order", effectClass: "create" as const, taskId: "ord-1" };

await settle.report({
  event_id: "rt:ord-1:r1",
  task_id: "ord-1",
  invocation_id: "inv-r1",
  tool: "lookup",
  envelope: { outcome: "ok", effect_applied: "yes" },
});
await settle.report([
  { event_id: "rt:ord-1:r2", task_id: "ord-1", invocation_id: "inv-r2", attempt: 1, phase: "intent", tool: "lookup" },
  {
    task_id: "ord-1",
    tool: "lookup",
    idempotency_key: "bare",
    envelope: { outcome: "retryable", effect_applied: "no", retry_after_s: 3 },
  },
]);
await settle.guard({ task_id: "ord-1", tool: "create_order", idempotency_key: "guard-only", effect_class: "create" });

// Returns at once; its arguments go with the intent (Python sends them by parameter name).
await settle.wrapTool(async ({ sku }: { sku: string }) => ({ id: `order-${sku}` }), {
  ...base,
  idempotencyKey: "k-ok",
})({
  sku: "a",
});
// A reset after dispatch; the probe finds the order.
await settle.wrapTool(
  async () => {
    throw new Error("connection reset");
  },
  { ...base, idempotencyKey: "k-found", probe: async () => ({ found: true, value: { id: "order-b" } }) },
)({});
// A reset; the probe finds nothing; Settle allows one retry with the same key.
let calls = 0;
await settle.wrapTool(
  async () => {
    calls += 1;
    if (calls === 1) throw new Error("connection reset");
    return { id: "order-c" };
  },
  { ...base, idempotencyKey: "k-retry", probe: async () => ({ found: false }) },
)({});
// A budget: the intent carries it.
await settle.wrapTool(async () => "fast", { ...base, idempotencyKey: "k-budget", timeoutMs: 5_000 })({});
// A read that fails once is retried.
let reads = 0;
await settle.wrapTool(
  async () => {
    reads += 1;
    if (reads === 1) throw new Error("upstream 503");
    return { cents: 420 };
  },
  { tool: "lookup_price", effectClass: "read", taskId: "ord-1", idempotencyKey: "k-read" },
)({});
// Held for approval; a person approves it with other arguments (the fake approves as safe_details.approve_as):
// the second call runs with them, and its intent carries them.
const held = {
  ok: false,
  code: "APPROVAL_REQUIRED",
  commit_state: "not_committed",
  next_action: "request_approval",
  safe_details: { approve_as: { sku: "b" } },
};
let asked = 0;
await settle.wrapTool(async ({ sku }: { sku: string }) => (++asked === 1 ? held : { id: `order-${sku}` }), {
  ...base,
  idempotencyKey: "k-edited",
  classify: (r) => (r.kind === "returned" && r.value === held ? held : { outcome: "ok", effect_applied: "yes" }),
})({ sku: "a" });
// The caller names the invocation.
await settle.wrapTool(async () => "named", { ...base, idempotencyKey: "k-named", invocationId: "inv-explicit" })({});
await settle.flush();
