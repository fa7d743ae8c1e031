#!/usr/bin/env node
// The `settle` command. The CLI shares lib/ with the app, which is TypeScript
// with `@/` paths, so it is loaded through tsx with the project's tsconfig
// instead of from a separate build that could drift from the app.
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";
import "../scripts/server-only-off.mjs";

const tsconfig = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
const { runCli } = await tsImport("../cli/main.ts", { parentURL: import.meta.url, tsconfig });
process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
