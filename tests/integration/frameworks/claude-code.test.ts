import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settleHooks } from "@settle/claude-code";
import { callHook, claudeCodeAgent } from "@/examples/frameworks/agents";
import {
  approvedWithEdits,
  BUDGET_MS,
  invocationsOf,
  openEnv,
  providerTools,
  rejectedWithReply,
  sixFailures,
  type Env,
} from "./kit";

// @settle/claude-code: settleHooks() typed against the Claude Agent SDK's own hook types (the `hooks` option of
// query()), driven the way Claude Code drives tool hooks — PreToolUse, the tool, then PostToolUse or
// PostToolUseFailure — and the settle-hook command fed the hook JSON Claude Code documents, against a real Settle.
// Claude Code's own loop is a ~420 MB native binary that talks to Anthropic's API: it is not run here.

const base = { transcript_path: "/tmp/t.jsonl", cwd: "/work", permission_mode: "default" };

/** The settle-hook command, as Claude Code runs it: the hook's JSON on stdin, its answer on stdout. */
function settleHook(
  env: Env,
  input: object,
  args: string[],
  stateDir: string,
): Promise<{ out: Record<string, unknown>; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["packages/settle-claude-code/bin/settle-hook.mjs", ...args, "--state-dir", stateDir],
      {
        env: { ...process.env, SETTLE_URL: env.server.url, SETTLE_KEY: env.t.key },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", () => {
      try {
        resolve({ out: JSON.parse(out) as Record<string, unknown>, err });
      } catch {
        reject(new Error(`settle-hook printed ${JSON.stringify(out)}; stderr ${err}`));
      }
    });
    child.stdin.end(JSON.stringify(input));
  });
}

describe("@settle/claude-code hooks (Claude Agent SDK types) and the settle-hook command", () => {
  let env: Env;
  beforeAll(async () => {
    env = await openEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  for (const [name, scenario] of Object.entries(sixFailures))
    it(`source article 002: ${name}`, async () => {
      await scenario(env, claudeCodeAgent(providerTools(env)), `cc-${name}`);
    });

  it("approved with edits while PreToolUse holds: the hook hands the approved arguments as updatedInput; one refund of them", async () => {
    await approvedWithEdits(env, claudeCodeAgent(providerTools(env)), "cc");
  });

  it("rejected with a reply while PreToolUse holds: the deny reason quotes the reply; the refund never runs", async () => {
    await rejectedWithReply(env, claudeCodeAgent(providerTools(env)), "cc");
  });

  it("settle-hook: PreToolUse allows the first call and denies its repeat with Settle's sentence; PostToolUseFailure reports it unknown", async () => {
    const state = mkdtempSync(join(tmpdir(), "settle-hook-"));
    const args = ["--effect", "mcp__payments__create_refund=money", "--timeout-s", "1"];
    const call = {
      ...base,
      session_id: "cc-cmd",
      tool_name: "mcp__payments__create_refund",
      tool_input: { payment: "pay_cmd", amount: 12 },
    };
    const first = await settleHook(
      env,
      { ...call, hook_event_name: "PreToolUse", tool_use_id: "toolu_1" },
      args,
      state,
    );
    expect(first.out).toEqual({});
    const failed = await settleHook(
      env,
      {
        ...call,
        hook_event_name: "PostToolUseFailure",
        tool_use_id: "toolu_1",
        error: "MCP error -32001: Request timed out",
      },
      args,
      state,
    );
    expect(failed.out).toMatchObject({
      hookSpecificOutput: {
        hookEventName: "PostToolUseFailure",
        additionalContext: expect.stringMatching(
          /^Unknown outcome: mcp__payments__create_refund failed after it was sent/,
        ),
      },
    });
    expect(await invocationsOf(env, "cc-cmd")).toMatchObject([{ status: "outcome_unknown", commit_state: "unknown" }]);
    const again = await settleHook(
      env,
      { ...call, hook_event_name: "PreToolUse", tool_use_id: "toolu_2" },
      args,
      state,
    );
    expect(again.out).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringMatching(
          /^Not run: an identical mcp__payments__create_refund call \d+ s ago has an unknown outcome; Settle is checking it\. Do not retry\.$/,
        ),
      },
    });
  });

  it("settle-hook: a call that needs approval is asked, with Settle's reason; without a key it denies and says why", async () => {
    const state = mkdtempSync(join(tmpdir(), "settle-hook-"));
    const call = {
      ...base,
      session_id: "cc-approve",
      hook_event_name: "PreToolUse",
      tool_name: "mcp__payments__create_refund",
      tool_input: { payment: "pay_ask", amount: 99 },
      tool_use_id: "toolu_a",
    };
    const asked = await settleHook(
      env,
      call,
      ["--effect", "mcp__payments__create_refund=money", "--approve", "money"],
      state,
    );
    expect(asked.out).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: "ask",
        permissionDecisionReason: expect.stringMatching(
          /^Not run yet: mcp__payments__create_refund needs a person's approval in Settle\./,
        ),
      },
    });
    expect(await invocationsOf(env, "cc-approve")).toMatchObject([{ status: "awaiting_approval" }]);
    const broken = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, ["packages/settle-claude-code/bin/settle-hook.mjs"], {
        env: { ...process.env, SETTLE_URL: "", SETTLE_KEY: "" },
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", () => resolve(out));
      child.stdin.end(JSON.stringify(call));
    });
    expect(JSON.parse(broken)).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringMatching(
          /^Not run: settle-hook could not ask Settle \(SETTLE_URL and SETTLE_KEY/,
        ),
      },
    });
  });

  it("reads Claude Code's own read-only tools as reads: never guarded", async () => {
    const hooks = settleHooks({ settle: env.client(), taskId: "cc-read" });
    const out = await callHook(hooks.PreToolUse, {
      ...base,
      session_id: "s",
      hook_event_name: "PreToolUse",
      tool_name: "Read",
      tool_input: { file_path: "/etc/hosts" },
      tool_use_id: "toolu_r",
    });
    expect(out).toEqual({});
    expect(await invocationsOf(env, "cc-read")).toEqual([]);
    expect(BUDGET_MS).toBeGreaterThan(0);
  });
});
