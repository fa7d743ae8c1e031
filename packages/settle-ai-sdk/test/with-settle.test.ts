import { describe, expect, it } from "vitest";
import { tool } from "ai";
import { z } from "zod";
import { createSettleClient } from "@settle/client";
import { settleClientOf, withSettle } from "../src/index.js";
import { createFakeSettle } from "../../settle-client/test/fake-settle.js";

// withSettle's shape, against an in-memory Settle (the real agent loop against a real Settle is in
// tests/integration/frameworks/ai-sdk.test.ts).

function setup() {
  const fake = createFakeSettle();
  const settle = createSettleClient({
    url: "http://settle.test",
    key: "k",
    fetch: fake.fetch,
    sleep: async () => {},
    maxRetries: 0,
  });
  let runs = 0;
  const tools = {
    create_refund: tool({
      inputSchema: z.object({ payment: z.string() }),
      execute: async () => ({ id: `re_${++runs}` }),
    }),
    ask_user: tool({ inputSchema: z.object({ question: z.string() }) }),
  };
  return { fake, settle, tools, runs: () => runs };
}
const call = { toolCallId: "c1", messages: [], context: {} };

describe("withSettle", () => {
  it("guards each execute and hands back the tool's own result; a tool without execute is left as it is", async () => {
    const { fake, settle, tools } = setup();
    const guarded = withSettle(tools, { settle, taskId: "t", effects: { create_refund: "money" } });
    expect(guarded.ask_user).toBe(tools.ask_user);
    expect(guarded.create_refund.needsApproval).toBeUndefined();
    expect(await guarded.create_refund.execute!({ payment: "p" }, call)).toEqual({ id: "re_1" });
    expect(fake.requests.map((r) => r.path)).toEqual(["/api/v1/guard", "/api/v1/envelopes"]);
    expect(settleClientOf(guarded)).toBe(settle);
  });

  it("when Settle cannot vouch for a money write, the model reads one sentence and the tool never runs", async () => {
    const { fake, settle, tools, runs } = setup();
    for (let i = 0; i < 3; i += 1) fake.faults.push({ path: "/api/v1/guard", fault: "unreachable" });
    const guarded = withSettle(tools, { settle, taskId: "t", effects: { create_refund: "money" } });
    expect(await guarded.create_refund.execute!({ payment: "p" }, call)).toBe(
      "Not run: Settle, which must vouch for create_refund before it runs, cannot be reached. Nothing happened; try again later.",
    );
    expect(runs()).toBe(0);
  });

  it("approvals give the tool a needsApproval that asks Settle", () => {
    const { settle, tools } = setup();
    const guarded = withSettle(tools, { settle, taskId: "t", approvals: ["money"] });
    expect(typeof guarded.create_refund.needsApproval).toBe("function");
  });
});
