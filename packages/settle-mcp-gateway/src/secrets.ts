import { closeSync, readFileSync } from "node:fs";
import type { Args } from "./args.js";
import { UsageError } from "./args.js";

// The gateway's secrets: Settle's runtime key and the HTTP gateway's bearer
// token. The key is read from a file or a file descriptor (--key-file,
// SETTLE_KEY_FILE, --key-fd) or, as before, the environment; once read, every
// variable that named a secret is deleted from the gateway's own environment,
// so nothing it starts inherits one. That is not a wall: a server running as
// the same user can read the gateway's initial environment in
// /proc/<pid>/environ (deleting a variable does not erase it there) and its
// command line (`--key` shows in `ps`). A key read from a descriptor that is
// then closed is in neither; an untrusted server belongs under another user
// or in a sandbox all the same.

/** Variables that hold or point at a secret: never passed on to a server the gateway starts. */
export const SECRET_VARIABLES = ["SETTLE_KEY", "SETTLE_KEY_FILE", "SETTLE_MCP_TOKEN", "SETTLE_MCP_TOKEN_FILE"] as const;

export type Secrets = { key: string | null; token: string | null; warnings: string[] };

function readSecretFile(source: string, read: () => string): string {
  let text: string;
  try {
    text = read();
  } catch (error) {
    throw new UsageError(`${source} cannot be read (${(error as Error).message})`);
  }
  const secret = text.trim();
  if (secret === "" || /\s/.test(secret)) throw new UsageError(`${source} must hold the secret alone, on one line`);
  return secret;
}

/** Reads the key and the token, then deletes the variables that held them from `env` (the process's own). */
export function readSecrets(
  args: Pick<Args, "key" | "keyFile" | "keyFd">,
  env: Record<string, string | undefined>,
): Secrets {
  const warnings: string[] = [];
  let key: string | null = null;
  if (args.keyFd !== undefined) {
    const fd = args.keyFd;
    key = readSecretFile(`--key-fd ${fd}`, () => readFileSync(fd, "utf8"));
    try {
      closeSync(fd);
    } catch {
      // already closed by the reader
    }
  } else if (args.keyFile !== undefined) {
    const file = args.keyFile;
    key = readSecretFile(`--key-file ${file}`, () => readFileSync(file, "utf8"));
  } else if (args.key !== undefined) {
    key = args.key;
    warnings.push(
      "--key puts the key in the process list, where every user of this machine can read it: use --key-file or SETTLE_KEY_FILE",
    );
  } else if (env.SETTLE_KEY_FILE) {
    const file = env.SETTLE_KEY_FILE;
    key = readSecretFile(`SETTLE_KEY_FILE ${file}`, () => readFileSync(file, "utf8"));
  } else if (env.SETTLE_KEY) {
    key = env.SETTLE_KEY.trim();
  }
  let token: string | null = null;
  if (env.SETTLE_MCP_TOKEN_FILE) {
    const file = env.SETTLE_MCP_TOKEN_FILE;
    token = readSecretFile(`SETTLE_MCP_TOKEN_FILE ${file}`, () => readFileSync(file, "utf8"));
  } else if (env.SETTLE_MCP_TOKEN) {
    token = env.SETTLE_MCP_TOKEN.trim() || null;
  }
  for (const name of SECRET_VARIABLES) delete env[name];
  return { key, token, warnings };
}
