import type { Sql } from "../db/driver";
import { shortestDays } from "./rules";
import { loadRetention } from "./settings";
import { addMonths, shelvedTables, type ShelvedTable } from "./shelves";

// Where retention has taken rows, for readers that count on them (a metric's cases): per month-partitioned
// table, the first moment from which its rows are all still here. The months before it were retired (detached,
// archived, dropped); their rows that had to stay moved to the kept shelf, so what is missing is what left. A
// runtime with a shorter period than the default loses its rows earlier, in batches: the latest such batch took
// rows of invocations closed at least the shortest period before it ran.

export type RetiredBefore = Partial<Record<ShelvedTable, Date>>;

export async function getRetiredBefore(sql: Sql): Promise<RetiredBefore> {
  const [rows, settings] = await Promise.all([
    sql.query<{ source: string; shelf: string | null; swept: string | null }>(
      `SELECT source, max(shelf)::text AS shelf, max(started_at) FILTER (WHERE shelf IS NULL) AS swept FROM retention_archives
        WHERE (shelf IS NOT NULL AND phase IN ('detached', 'archived', 'dropped')) OR (shelf IS NULL AND phase = 'deleted')
        GROUP BY source`,
    ),
    loadRetention(sql),
  ]);
  const out: RetiredBefore = {};
  for (const { table, period } of shelvedTables) {
    const row = rows.find((r) => r.source === table);
    const months = row?.shelf ? new Date(`${addMonths(row.shelf, 1)}T00:00:00.000Z`).getTime() : 0;
    const swept = row?.swept ? new Date(row.swept).getTime() - shortestDays(settings, period) * 86_400_000 : 0;
    if (Math.max(months, swept) > 0) out[table] = new Date(Math.max(months, swept));
  }
  return out;
}
