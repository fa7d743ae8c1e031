import { env } from "./env";
import { firstRun } from "./first-run";
import { startBackgroundJobs } from "./jobs/scheduler";

export async function startServer(): Promise<void> {
  if (env().NEXT_PHASE === "phase-production-build") return;
  await firstRun().catch((error: unknown) => {
    console.error(`Settle could not open its database at start-up: ${error instanceof Error ? error.message : String(error)}`);
  });
  if (env().SETTLE_BACKGROUND_JOBS === "on") startBackgroundJobs();
}
