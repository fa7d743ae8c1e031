import type { HookCallbackMatcher, HookEvent, HookInput } from "@anthropic-ai/claude-agent-sdk";
import { createHookHandlers, type SettleHookOptions } from "./hooks.js";
import { memoryStore } from "./store.js";

// settleHooks(options): the `hooks` option of the Claude Agent SDK's query(),
// putting every tool call under Settle. The same handlers serve the
// settle-hook command for Claude Code's settings (src/cli.ts).

export { createHookHandlers, readOnlyTools, type HookContext, type SettleHookOptions } from "./hooks.js";
export { fileStore, memoryStore, type CallStore, type KeptCall } from "./store.js";

export function settleHooks(
  options: SettleHookOptions & { matcher?: string },
): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const handlers = createHookHandlers(options, memoryStore());
  const on = (run: (input: HookInput) => Promise<object>): HookCallbackMatcher[] => [
    { ...(options.matcher ? { matcher: options.matcher } : {}), hooks: [async (input) => run(input)] },
  ];
  return {
    PreToolUse: on((input) =>
      input.hook_event_name === "PreToolUse" ? handlers.preToolUse(input) : Promise.resolve({}),
    ),
    PostToolUse: on((input) =>
      input.hook_event_name === "PostToolUse" ? handlers.postToolUse(input) : Promise.resolve({}),
    ),
    PostToolUseFailure: on((input) =>
      input.hook_event_name === "PostToolUseFailure" ? handlers.postToolUseFailure(input) : Promise.resolve({}),
    ),
  };
}
