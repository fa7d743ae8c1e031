import { readFileSync } from "node:fs";
import type { EffectClass } from "@settle/client";
import type { HookInput } from "@anthropic-ai/claude-agent-sdk";
import { createHookHandlers } from "./hooks.js";
import { fileStore } from "./store.js";

// settle-hook: Claude Code runs it for PreToolUse, PostToolUse and
// PostToolUseFailure with the hook's JSON on stdin; it prints the hook's JSON
// answer on stdout and exits 0. Settle's address and key come from
// SETTLE_URL and SETTLE_KEY (or SETTLE_KEY_FILE); classes and approvals from
// flags. A hook that cannot do its work says so on stderr and exits 0 with no
// decision, except that a write Settle cannot vouch for is denied (PreToolUse).

const classes = new Set(["read", "create", "send", "money", "destructive"]);
const usage = `settle-hook [--effect TOOL=CLASS]… [--approve CLASS]… [--task ID] [--timeout-s N] [--state-dir DIR]
  Reads a Claude Code hook's JSON on stdin (PreToolUse, PostToolUse, PostToolUseFailure); env SETTLE_URL, SETTLE_KEY or SETTLE_KEY_FILE.`;

export type HookIo = { stdin: string; env: Record<string, string | undefined>; argv: string[] };

export function parseArgs(argv: string[]) {
  const effects: Record<string, EffectClass> = {};
  const approvals: EffectClass[] = [];
  let task: string | undefined;
  let timeoutS: number | undefined;
  let stateDir: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, value] = [argv[i], argv[i + 1] ?? ""];
    i += 1;
    if (flag === "--effect") {
      const [tool, cls] = value.split("=");
      if (!tool || !cls || !classes.has(cls))
        throw new Error(`--effect takes TOOL=CLASS (a class of ${[...classes].join(", ")})`);
      effects[tool] = cls as EffectClass;
    } else if (flag === "--approve" && classes.has(value)) approvals.push(value as EffectClass);
    else if (flag === "--task" && value) task = value;
    else if (flag === "--timeout-s" && Number(value) > 0) timeoutS = Number(value);
    else if (flag === "--state-dir" && value) stateDir = value;
    else throw new Error(`unknown or incomplete option ${flag}\n${usage}`);
  }
  return { effects, approvals, task, timeoutS, stateDir };
}

/** One hook run: the JSON Claude Code reads from stdout. */
export async function runHook(io: HookIo): Promise<object> {
  const args = parseArgs(io.argv);
  const url = io.env.SETTLE_URL;
  const key =
    io.env.SETTLE_KEY ?? (io.env.SETTLE_KEY_FILE ? readFileSync(io.env.SETTLE_KEY_FILE, "utf8").trim() : undefined);
  if (!url || !key) throw new Error(`SETTLE_URL and SETTLE_KEY (or SETTLE_KEY_FILE) must be set\n${usage}`);
  const input = JSON.parse(io.stdin) as HookInput;
  const handlers = createHookHandlers(
    {
      settle: { url, key },
      effects: args.effects,
      approvals: args.approvals,
      ...(args.task ? { taskId: args.task } : {}),
      ...(args.timeoutS ? { timeoutMs: args.timeoutS * 1000 } : {}),
    },
    fileStore(args.stateDir),
  );
  if (input.hook_event_name === "PreToolUse") return handlers.preToolUse(input);
  if (input.hook_event_name === "PostToolUse") return handlers.postToolUse(input);
  if (input.hook_event_name === "PostToolUseFailure") return handlers.postToolUseFailure(input);
  return {};
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const stdin = Buffer.concat(chunks).toString("utf8");
  // The command's settings are its environment: it is a process of its own, not the server.
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  try {
    const answer = await runHook({ stdin, env, argv });
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`settle-hook: ${message}\n`);
    // A call nothing could vouch for is not run; after the call, there is nothing left to stop.
    const pre = /"hook_event_name"\s*:\s*"PreToolUse"/.test(stdin);
    const reason = `Not run: settle-hook could not ask Settle (${message.split("\n")[0]}). Nothing happened; tell the user the hook's Settle setup must be fixed.`;
    const deny = { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason };
    process.stdout.write(`${JSON.stringify(pre ? { hookSpecificOutput: deny } : {})}\n`);
  }
}
