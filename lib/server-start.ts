import { authSecret } from "./identity/secret";
import { claimEmbeddedDirectories } from "./db/private-dir";
import { env } from "./env";
import { socketAddressIsTrusted } from "./identity/client-ip";
import { firstRun } from "./first-run";
import { startBackgroundJobs } from "./jobs/scheduler";
import { processWide } from "./process-wide";

/**
 * What is wrong with the settings, in one line that says what to do, or null.
 * Checked before the server takes a request: a setting that is missing or
 * malformed stops Settle at start-up instead of failing every page later.
 */
export function settingsProblem(): string | null {
  try {
    const settings = env();
    if (settings.NEXT_PHASE === "phase-production-build") return null;
    // Before anything writes there: the embedded database's folders are this user's alone, or Settle stops.
    if (!settings.DATABASE_URL && !settings.SETTLE_DATA_DIR.startsWith("memory://"))
      claimEmbeddedDirectories(settings.SETTLE_DATA_DIR);
    authSecret();
    return null;
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).replace(/\n\s*/g, " ");
  }
}

/** Start-up, once: bin/settle-server.mjs waits for it (as `startup`) before it listens, so nothing is served by a server that is about to stop. */
export function startServer(): Promise<void> {
  return processWide("startup", start);
}

async function start(): Promise<void> {
  const problem = settingsProblem();
  if (problem) {
    console.error(`Settle cannot start: ${problem}`);
    process.exit(1);
  }
  if (env().NEXT_PHASE === "phase-production-build") return;
  if (env().NODE_ENV === "production" && !socketAddressIsTrusted()) {
    console.warn(
      "Settle: started without bin/settle-server.mjs (use `npm start`), so client addresses are unknown: sign-in limits per address are shared by everyone.",
    );
  }
  await firstRun().catch((error: unknown) => {
    console.error(
      `Settle could not open its database at start-up: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  if (env().SETTLE_BACKGROUND_JOBS === "on") startBackgroundJobs();
}
