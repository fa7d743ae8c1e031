import { getDb, type Db } from "../db/client";
import { env } from "../env";
import { log } from "../observability/log";
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
        .then((db) => runLogged(job, db, new Date()))
        .catch(() => {}) // logged by runLogged; getDb's failure is the next request's to report
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

const msSince = (started: number) => Math.round((performance.now() - started) * 10) / 10;

/** Did a run change anything? A job's result counts what it did: any number above zero. */
function didWork(result: unknown): boolean {
  if (typeof result === "number") return result > 0;
  if (Array.isArray(result)) return result.length > 0;
  if (result && typeof result === "object") return Object.values(result).some(didWork);
  return result === true;
}

/** Runs a job and logs the run in one line: at `info` when it did something or failed, at `debug` when idle (every few seconds). */
async function runLogged(job: Job, db: Db, now: Date): Promise<void> {
  const started = performance.now();
  try {
    const result = await job.run(db, now);
    const line = { job: job.name, duration_ms: msSince(started), result: summary(result) };
    if (didWork(result)) log.info(line, "background job");
    else log.debug(line, "background job");
  } catch (error) {
    log.error({ job: job.name, duration_ms: msSince(started), err: error }, "background job failed");
    throw error;
  }
}

/** Counts only: a job's result may name rows, never their contents. */
function summary(result: unknown): unknown {
  if (typeof result === "number" || typeof result === "boolean") return result;
  if (Array.isArray(result)) return result.length;
  if (result && typeof result === "object")
    return Object.fromEntries(Object.entries(result).map(([k, v]) => [k, summary(v)]));
  return null;
}

/** Runs every job once, in order: for the CLI and for tests with a controlled clock. */
export async function runJobsOnce(db: Db, now: Date, list: readonly Job[] = jobs): Promise<void> {
  for (const job of list) await runLogged(job, db, now);
}
