#!/usr/bin/env node
// The `settle-hook` command for Claude Code's hooks (see ../README.md). Installed from npm it runs the built
// copy in dist/. In the Settle repository (the client's sources beside it) it loads its sources through tsx with
// the repository's tsconfig, as `settle-mcp` does, so nothing there runs a build that could lag behind its source.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const inRepository = existsSync(new URL("../../settle-client/src/gate/gate.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("../../../tsconfig.json", import.meta.url));
const { main } = inRepository
  ? await (await import("tsx/esm/api")).tsImport("../src/cli.ts", { parentURL: import.meta.url, tsconfig })
  : await import("../dist/cli.js");
await main();
