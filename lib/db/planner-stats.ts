import type { SqlDriver } from "./driver";
import { processWide } from "../process-wide";

// The write path's statements are prepared once per connection and keep a
// generic plan. A plan made while its tables were (nearly) empty sees every
// index that starts with runtime_id as equally cheap and may pick one that
// reads the runtime's whole range; PostgreSQL plans again when the tables'
// statistics change, but autovacuum first analyzes a table up to a minute or
// more after it started growing. So the write path tells the planner itself:
// when a table it writes has grown to twice what the statistics say, it is
// analyzed, in the background, off the request's path.

const TABLES = ["invocations", "attempts"] as const;
const FIRST_CHECK = 500;
// Past this the statistics tell the planner the table is no longer empty, which is all the
// plans here need; autovacuum keeps them current from then on (an ANALYZE of a big table costs
// about a second of CPU here).
const LAST_CHECK = 20_000;

type Keeper = { written: number; nextCheck: number; running: boolean };
const keepers = processWide("plannerStats", () => new WeakMap<SqlDriver, Keeper>());

async function refresh(driver: SqlDriver): Promise<void> {
  const rows = await driver.query<{ relname: string; reltuples: number; live: number }>(
    `SELECT c.relname, c.reltuples::float8 AS reltuples, coalesce(s.n_live_tup, 0)::float8 AS live
       FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE c.relname = ANY($1::text[]) AND c.relnamespace = 'public'::regnamespace`,
    [TABLES],
  );
  for (const r of rows) {
    // reltuples is -1 for a table never analyzed.
    if (r.live >= FIRST_CHECK && r.live > 2 * Math.max(r.reltuples, 0))
      await driver.exec(`ANALYZE ${r.relname === "attempts" ? "attempts" : "invocations"}`);
  }
}

/** Counts rows the write path stored; now and then looks whether the planner's statistics have fallen behind. */
export function noteWrites(driver: SqlDriver, rows: number): void {
  if (driver.kind !== "postgres" || rows === 0) return;
  const k = keepers.get(driver) ?? { written: 0, nextCheck: FIRST_CHECK, running: false };
  keepers.set(driver, k);
  k.written += rows;
  if (k.written < k.nextCheck || k.running || k.nextCheck > LAST_CHECK) return;
  k.nextCheck = k.written * 2;
  k.running = true;
  refresh(driver)
    .catch((error: unknown) =>
      console.error(
        `[settle] could not refresh planner statistics: ${error instanceof Error ? error.message : String(error)}`,
      ),
    )
    .finally(() => {
      k.running = false;
    });
}
