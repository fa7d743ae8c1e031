import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { PG_ADMIN_URL, readState, STATE_FILE } from "./server";

function stop(pid: number) {
  try {
    // Each server was started in its own process group: stop it and its children.
    process.kill(-pid, "SIGTERM");
  } catch {
    /* already gone */
  }
}

export default async function globalTeardown() {
  if (!existsSync(STATE_FILE)) return;
  const state = readState();
  stop(state.embedded.pid);
  stop(state.console.pid);
  await new Promise((r) => setTimeout(r, 500));
  rmSync(state.embedded.dataDir, { recursive: true, force: true });
  spawnSync("psql", [PG_ADMIN_URL, "-qc", `DROP DATABASE IF EXISTS ${state.console.databaseName} WITH (FORCE)`]);
  rmSync(STATE_FILE, { force: true });
}
