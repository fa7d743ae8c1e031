import type { SqlDriver } from "../db/driver";
import { ArchiveError, readArchive } from "./archive";
import { batchRelations } from "./batches";
import { ident, makePartition } from "./partitions";
import { shelfOf, shelvedTables, type ShelvedTable } from "./shelves";

// `settle archive restore`: an archived file's rows back into a Settle database (migrated; a scratch one for an
// investigation, or the live one). Rows go in as they were archived, through the table, so a month's rows land
// in their month's partition (made if missing); a row already there is left as it is, so a restore can be run
// again. One transaction: a file goes in whole or not at all.

const restorable = new Set<string>([...shelvedTables.map((t) => t.table), ...Object.keys(batchRelations)]);

export type RestoreReport = { table: string; source: string; rows: number };

export async function restoreArchive(driver: SqlDriver, file: string): Promise<RestoreReport> {
  const { header, pages } = await readArchive(file);
  const table = header.table;
  if (!restorable.has(table)) {
    throw new ArchiveError(`${file} holds rows of ${table}, which Settle does not restore`);
  }
  const [exists] = await driver.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [table]);
  if (!exists?.found) throw new ArchiveError(`the database has no table ${table}: run settle migrate on it first`);
  if (header.shelf && shelvedTables.some((t) => t.table === table)) {
    await makePartition(driver, table as ShelvedTable, shelfOf(new Date(`${header.shelf}T00:00:00Z`)));
  }
  const columns = await driver.query<{ name: string }>(
    `SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`,
    [table],
  );
  let rows = 0;
  await driver.transaction(async (tx) => {
    for await (const page of pages) {
      if (page.length === 0) continue;
      // The columns the file has: one the table gained since takes its default (a month's shelf, a flag).
      const list = columns
        .map((c) => c.name)
        .filter((c) => c in page[0]!)
        .map(ident)
        .join(", ");
      await tx.query(
        `INSERT INTO ${ident(table)} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${ident(table)}, $1::json)
         ON CONFLICT DO NOTHING`,
        [JSON.stringify(page)],
      );
      rows += page.length;
    }
  });
  return { table, source: header.source, rows };
}
