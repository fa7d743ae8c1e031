import path from "node:path";
import { OUT_DIR } from "./server";

// The screenshots in docs/screenshots are committed: the docs show them. A run of the e2e suite writes every
// screenshot under its output folder (SETTLE_E2E_OUT, else test-results), so it leaves the git tree as it found
// it; SETTLE_UPDATE_SCREENSHOTS=1 writes the ones the docs show over the committed files instead, to refresh
// them after a change to the console (docs/development.md).

/**
 * Where a screenshot the docs show is written (`name`: its file in docs/screenshots, e.g. "queue-wide.png"):
 * there when SETTLE_UPDATE_SCREENSHOTS=1, else in this run's output folder's screenshots/.
 */
export function docScreenshot(name: string, env: Record<string, string | undefined> = process.env): string {
  const refresh = env.SETTLE_UPDATE_SCREENSHOTS === "1";
  return path.join(refresh ? path.join("docs", "screenshots") : path.join(OUT_DIR, "screenshots"), name);
}
