import { getDb, type Db } from "../db/client";
import { env } from "../env";
import type { Job } from "./job";
import { jobs } from "./registry";

// Runs the background jobs in this process on a timer. Every app instance runs
// them; each job is safe to run concurrently in several instances (it claims
// its rows with FOR UPDATE SKIP LOCKED or acts through version checks), so
// nothing depends on one process's memory.

export type { Job };

type Running = { stop: () => Promise<void> };

export function startBackgroundJobs(list: readonly Job[] = jobs): Running {
  const busy = new Map<string, Promise<unknown>>();
  const tick = () => {
    for (const job of list) {
      if (busy.has(job.name)) continue;
      const run = getDb()
        .then((db) => job.run(db, new Date()))
        .catch((error: unknown) =>
          console.error(
            `Settle background job ${job.name} failed: ${error instanceof Error ? error.message : String(error)}`,
          ),
        )
        .finally(() => busy.delete(job.name));
      busy.set(job.name, run);
    }
  };
  const timer = setInterval(tick, env().SETTLE_JOBS_INTERVAL_S * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await Promise.allSettled(busy.values());
    },
  };
}

/** Runs every job once, in order: for the CLI and for tests with a controlled clock. */
export async function runJobsOnce(db: Db, now: Date, list: readonly Job[] = jobs): Promise<void> {
  for (const job of list) await job.run(db, now);
}
