import type { Sql } from "../db/driver";
import { addMonths, shelvedTables, type ShelvedTable } from "./shelves";

// Where retention has taken rows, for readers that count on them (a metric's cases): per month-partitioned
// table, the first moment from which its rows are all still here. The months before it were retired (detached,
// archived, dropped); their rows that had to stay moved to the kept shelf, so what is missing is what left.

export type RetiredBefore = Partial<Record<ShelvedTable, Date>>;

export async function getRetiredBefore(sql: Sql): Promise<RetiredBefore> {
  const rows = await sql.query<{ source: string; shelf: string }>(
    `SELECT source, max(shelf)::text AS shelf FROM retention_archives
      WHERE shelf IS NOT NULL AND phase IN ('detached', 'archived', 'dropped') GROUP BY source`,
  );
  const out: RetiredBefore = {};
  for (const { table } of shelvedTables) {
    const row = rows.find((r) => r.source === table);
    if (row) out[table] = new Date(`${addMonths(row.shelf, 1)}T00:00:00.000Z`);
  }
  return out;
}
