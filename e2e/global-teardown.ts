import { existsSync, rmSync } from "node:fs";
import { readState, STATE_FILE } from "./server";

export default async function globalTeardown() {
  if (!existsSync(STATE_FILE)) return;
  const state = readState();
  try {
    // The server was started in its own process group: stop it and its children.
    process.kill(-state.pid, "SIGTERM");
  } catch {
    /* already gone */
  }
  await new Promise((r) => setTimeout(r, 500));
  rmSync(state.dataDir, { recursive: true, force: true });
  rmSync(STATE_FILE, { force: true });
}
