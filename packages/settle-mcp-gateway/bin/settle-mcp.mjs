#!/usr/bin/env node
// The `settle-mcp` command. Installed from npm it runs the built gateway in
// dist/. In the Settle repository (its sources beside it) it loads them
// through tsx with the repository's tsconfig instead, as the `settle` CLI
// does, so nothing there runs a build that could lag behind its source.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const sources = new URL("../src/main.ts", import.meta.url);
const tsconfig = fileURLToPath(new URL("../../../tsconfig.json", import.meta.url));
const { runMain } =
  existsSync(sources) && existsSync(tsconfig)
    ? await (await import("tsx/esm/api")).tsImport("../src/main.ts", { parentURL: import.meta.url, tsconfig })
    : await import("../dist/main.js");
// The launcher is the one reader of the environment: the gateway gets it passed in.
process.exitCode = await runMain(process.argv.slice(2), {
  // eslint-disable-next-line no-restricted-properties
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
