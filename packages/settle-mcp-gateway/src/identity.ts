import { createHash } from "node:crypto";
import type { ToolRule } from "./config.js";

// The identities of one tools/call (docs/outcome-model.md §1, source article 002 (docs/outcome-model.md)): which task it serves,
// and the idempotency key that makes a re-issued call recognisable as the
// same intent. The key is the tool's name and a canonical digest of its
// arguments — object keys sorted, so {"a":1,"b":2} and {"b":2,"a":1} are one
// intent — or of the arguments a rule names (key_args), so a timestamp or a
// nonce in the payload does not make every retry a new intent; or a
// business key the rule spells out from the arguments (key).

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function canonicalJson(value: unknown): string {
  if (value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value as Json) ?? "null";
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The digest of a call's arguments, as Settle's `args_digest`. */
export function digestArguments(args: unknown): string {
  return `sha256:${sha256(canonicalJson(args ?? {}))}`;
}

/** Reads a dotted path ("customer.id") out of the arguments; undefined when absent. */
export function readPath(args: unknown, path: string): unknown {
  let at: unknown = args;
  for (const part of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** The call's arguments without the one the gateway sets itself (`idempotency_arg`): the model's value there is noise. */
export function withoutKeyArg(args: unknown, rule: ToolRule | null): unknown {
  if (!rule?.idempotency_arg || args === null || typeof args !== "object" || Array.isArray(args)) return args;
  const { [rule.idempotency_arg]: _minted, ...rest } = args as Record<string, unknown>;
  return rest;
}

/** The arguments as forwarded: `idempotency_arg` set to Settle's key for the call. */
export function withKeyArg(args: unknown, rule: ToolRule | null, key: string): unknown {
  if (!rule?.idempotency_arg) return args;
  const base =
    args !== null && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  return { ...base, [rule.idempotency_arg]: key };
}

function keyedArguments(args: unknown, rule: ToolRule | null): unknown {
  if (!rule?.key_args) return withoutKeyArg(args, rule) ?? {};
  return Object.fromEntries(rule.key_args.map((path) => [path, readPath(args, path) ?? null]));
}

export type CallIdentity = {
  taskId: string;
  idempotencyKey: string;
  argsDigest: string;
  /** What Settle is sent of the call (it redacts, digests and summarises them); null: only the digest. */
  arguments: Record<string, unknown> | null;
};

/** Settle stores at most 64 KiB of a call's arguments: larger ones go as their digest alone. */
const ARGUMENTS_SENT_MAX = 60_000;

/** The call's arguments as Settle is sent them, unless the tool's rule keeps them here (send_arguments: false). */
function sentArguments(args: unknown, rule: ToolRule | null): Record<string, unknown> | null {
  if (rule?.send_arguments === false) return null;
  const own = withoutKeyArg(args, rule);
  if (own === null || typeof own !== "object" || Array.isArray(own) || Object.keys(own).length === 0) return null;
  return canonicalJson(own).length > ARGUMENTS_SENT_MAX ? null : (own as Record<string, unknown>);
}

/**
 * `mcp:<tool>:<digest>`, with the task folded into the digest when the rule
 * scopes keys to a task. Settle's guard looks at every invocation of the
 * runtime with the key, in any task: a runtime-scoped key stops the same
 * call in a new session too (a client that restarted and re-issued it).
 */
export function identify(tool: string, args: unknown, taskId: string, rule: ToolRule | null): CallIdentity {
  const scope = rule?.key_scope === "task" ? `${taskId}\n` : "";
  const named = rule?.key ? fillTemplate(rule.key, args) : null;
  return {
    taskId,
    idempotencyKey:
      named !== null
        ? `${scope ? `${taskId}:` : ""}${named}`.slice(0, 512)
        : `mcp:${tool}:${sha256(`${scope}${canonicalJson(keyedArguments(args, rule))}`).slice(0, 32)}`,
    argsDigest: digestArguments(withoutKeyArg(args, rule)),
    arguments: sentArguments(args, rule),
  };
}

/** "charge:{{args.order_id}}" with the call's arguments; an argument that is missing leaves the key to the digest. */
function fillTemplate(template: string, args: unknown): string | null {
  let missing = false;
  const filled = template.replace(/\{\{args\.([^}]+)\}\}/g, (_, p: string) => {
    const value = readPath(args, p);
    if (value === undefined || value === null || typeof value === "object") missing = true;
    return String(value ?? "");
  });
  return missing ? null : filled;
}

/**
 * The call once a person approved other arguments in its place (approve with edits): the same key and invocation,
 * the approved arguments sent and digested as the call's own would be (without `idempotency_arg`), so the records
 * match the digest the approval is bound to.
 */
export function approvedIdentity(id: CallIdentity, approved: Record<string, unknown>, rule: ToolRule | null) {
  return {
    ...id,
    argsDigest: digestArguments(withoutKeyArg(approved, rule)),
    arguments: sentArguments(approved, rule),
  };
}

export type TaskSources = { sources: Array<"meta" | "header" | "session">; meta_key: string; header: string };

/** The first task id the configured sources give; the session's when none does. */
export function resolveTask(
  sources: TaskSources,
  from: {
    meta: Record<string, unknown> | undefined;
    headers: Record<string, string | undefined> | undefined;
    sessionTask: string;
  },
): string {
  for (const source of sources.sources) {
    if (source === "meta") {
      const value = from.meta?.[sources.meta_key];
      if (typeof value === "string" && value.trim() !== "") return value.trim().slice(0, 256);
    } else if (source === "header") {
      const value = from.headers?.[sources.header.toLowerCase()];
      if (value && value.trim() !== "") return value.trim().slice(0, 256);
    } else {
      return from.sessionTask;
    }
  }
  return from.sessionTask;
}
