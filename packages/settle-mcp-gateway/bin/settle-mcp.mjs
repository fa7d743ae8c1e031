#!/usr/bin/env node
// The `settle-mcp` command. The gateway is TypeScript that shares
// @settle/client with the rest of the repository, so it is loaded through tsx
// with the repository's tsconfig (its paths name @settle/client), as the
// `settle` CLI is, instead of from a separate build that could drift.
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const tsconfig = fileURLToPath(new URL("../../../tsconfig.json", import.meta.url));
const { runMain } = await tsImport("../src/main.ts", { parentURL: import.meta.url, tsconfig });
// The launcher is the one reader of the environment: the gateway gets it passed in.
process.exitCode = await runMain(process.argv.slice(2), {
  // eslint-disable-next-line no-restricted-properties
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
