import type { Db } from "../db/client";

// What a background job is. Its own module, so the jobs, their registry and
// the scheduler import it without importing each other in a circle.

export type Job = { name: string; run: (db: Db, now: Date) => Promise<unknown> };
