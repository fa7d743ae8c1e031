import { describe, expect, it } from "vitest";
import { ToolMessage } from "langchain";
import { readToolMessage, settleMiddleware } from "../src/index.js";

// The middleware's shape and how a ToolMessage reads to Settle (the agent loop against a real Settle is in
// tests/integration/frameworks/langchain.test.ts).

describe("settleMiddleware", () => {
  it("is a langchain middleware that wraps tool calls", () => {
    const middleware = settleMiddleware({ settle: { url: "http://settle.test", key: "k" }, taskId: "t" });
    expect(middleware.name).toBe("SettleMiddleware");
    expect(typeof middleware.wrapToolCall).toBe("function");
  });

  it("a ToolMessage with status error reads as a failure; its JSON content as the value it encodes", () => {
    expect(
      readToolMessage(new ToolMessage({ content: "gateway timeout", tool_call_id: "c", status: "error" })),
    ).toEqual({ error: "gateway timeout" });
    expect(readToolMessage(new ToolMessage({ content: '{"id":"re_1"}', tool_call_id: "c" }))).toEqual({ id: "re_1" });
    expect(readToolMessage(new ToolMessage({ content: "done", tool_call_id: "c" }))).toBe("done");
    expect(readToolMessage({ plain: true })).toEqual({ plain: true });
  });
});
