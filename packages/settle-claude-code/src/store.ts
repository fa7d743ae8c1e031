import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EffectClass } from "@settle/client";

// What PreToolUse learned (the invocation and attempt the guard recorded the
// intent for) until PostToolUse reports the outcome, keyed by tool_use_id.
// The settle-hook command is a new process per hook, so it keeps a small file
// per call (private to the user); query()'s hooks live in one process and keep a Map.

export type KeptCall = {
  invocationId: string;
  attempt: number;
  taskId: string;
  idempotencyKey: string;
  effect: EffectClass | null;
};

export type CallStore = {
  put: (toolUseId: string, call: KeptCall) => Promise<void>;
  take: (toolUseId: string) => Promise<KeptCall | null>;
};

export function memoryStore(): CallStore {
  const calls = new Map<string, KeptCall>();
  return {
    put: async (id, call) => void calls.set(id, call),
    take: async (id) => {
      const call = calls.get(id) ?? null;
      calls.delete(id);
      return call;
    },
  };
}

export function fileStore(dir = join(tmpdir(), "settle-hook")): CallStore {
  const path = (id: string) => join(dir, `${createHash("sha256").update(id).digest("hex").slice(0, 32)}.json`);
  return {
    put: async (id, call) => {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(path(id), JSON.stringify(call), { mode: 0o600 });
    },
    take: async (id) => {
      try {
        const call = JSON.parse(await readFile(path(id), "utf8")) as KeptCall;
        await rm(path(id), { force: true });
        return call;
      } catch {
        return null;
      }
    },
  };
}
