import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withSettle } from "../src/index.js";

// withSettle's shape (the run loop against a real Settle is in tests/integration/frameworks/openai-agents.test.ts).

const settle = { url: "http://settle.test", key: "k" };
const definition = {
  name: "create_refund",
  description: "Refund",
  parameters: z.object({ payment: z.string() }),
  execute: async () => "ok",
};

describe("withSettle", () => {
  it("builds function tools from tool() definitions; needsApproval asks Settle only when approvals are set", async () => {
    const [plain] = withSettle([definition], { settle, taskId: "t" });
    expect(plain).toMatchObject({ type: "function", name: "create_refund" });
    expect(await plain!.needsApproval({} as never, { payment: "p" }, "c1")).toBe(false);
    const [held] = withSettle([definition], { settle, taskId: "t", approvals: ["money"] });
    expect(held!.needsApproval).not.toBe(plain!.needsApproval);
  });

  it("refuses a tool already built: its thrown errors would reach Settle as text", () => {
    const [built] = withSettle([definition], { settle, taskId: "t" });
    expect(() => withSettle([built as never], { settle, taskId: "t" })).toThrow(/not a tool already built/);
  });
});
