import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseArgs } from "../src/cli.js";
import { fileStore, memoryStore, settleHooks } from "../src/index.js";

// The command's flags, the store that carries a call from PreToolUse to PostToolUse, the hooks' shape (the hooks and
// the command against a real Settle: tests/integration/frameworks/claude-code.test.ts).

describe("settle-hook", () => {
  it("reads --effect, --approve, --task, --timeout-s and refuses what it does not know", () => {
    expect(
      parseArgs(["--effect", "mcp__pay__refund=money", "--approve", "money", "--task", "t", "--timeout-s", "30"]),
    ).toMatchObject({
      effects: { mcp__pay__refund: "money" },
      approvals: ["money"],
      task: "t",
      timeoutS: 30,
    });
    expect(() => parseArgs(["--effect", "refund=cash"])).toThrow(/TOOL=CLASS/);
    expect(() => parseArgs(["--bogus", "x"])).toThrow(/unknown or incomplete option --bogus/);
  });

  it("keeps what PreToolUse learned until PostToolUse takes it, once, in a file or in memory", async () => {
    const kept = { invocationId: "inv", attempt: 2, taskId: "t", idempotencyKey: "k", effect: "money" as const };
    for (const store of [fileStore(mkdtempSync(join(tmpdir(), "settle-hook-"))), memoryStore()]) {
      await store.put("toolu_1", kept);
      expect(await store.take("toolu_1")).toEqual(kept);
      expect(await store.take("toolu_1")).toBeNull();
    }
  });

  it("settleHooks registers PreToolUse, PostToolUse and PostToolUseFailure, with the matcher given", () => {
    const hooks = settleHooks({ settle: { url: "http://settle.test", key: "k" }, matcher: "mcp__payments__.*" });
    expect(Object.keys(hooks)).toEqual(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);
    expect(hooks.PreToolUse?.[0]).toMatchObject({ matcher: "mcp__payments__.*" });
  });
});
