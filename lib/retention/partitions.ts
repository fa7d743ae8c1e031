import type { Sql, SqlDriver } from "../db/driver";
import {
  addMonths,
  defaultPartition,
  partitionName,
  shelfOf,
  shelfOfPartition,
  shelvedTables,
  shelvesAhead,
  type Shelf,
  type ShelvedTable,
} from "./shelves";

// The month partitions of the shelved tables (decision 035). Settle's retention job keeps this month's and
// the next months' partitions made ahead, so ingest never waits on DDL; a record for a month without one
// (an import of old data, a server that was off over a month's turn) lands in the default partition, and the
// next run makes that month's partition and moves the rows into it. Made as a plain table and then attached,
// which locks the parent less than CREATE TABLE … PARTITION OF (ingest goes on meanwhile).

/** How many months after this one have their partition made ahead. */
export const MONTHS_AHEAD = 2;

/** An identifier of Settle's own making (a table or partition name), quoted for DDL. Never request text. */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not one of Settle's table names: ${name}`);
  return `"${name}"`;
}

/** A shelf as a DDL literal (partition bounds take no parameters): checked to be a date Settle made. */
export function shelfLiteral(shelf: Shelf): string {
  if (!/^\d{4}-\d{2}-01$/.test(shelf)) throw new Error(`not a shelf: ${shelf}`);
  return `'${shelf}'`;
}

export type ShelfPartition = { name: string; shelf: Shelf };

/** The month partitions attached to a shelved table, oldest first. */
export async function listShelfPartitions(sql: Sql, table: ShelvedTable): Promise<ShelfPartition[]> {
  const rows = await sql.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass($1)`,
    [table],
  );
  return rows
    .map((r) => ({ name: r.name, shelf: shelfOfPartition(table, r.name) }))
    .filter((p): p is ShelfPartition => p.shelf !== null)
    .sort((a, b) => a.shelf.localeCompare(b.shelf));
}

const LOCK = `SELECT pg_advisory_xact_lock(hashtext('settle_partitions'))`;

/** Makes one month's partition (unless it exists), taking that month's rows out of the default partition into it. */
export async function makePartition(driver: SqlDriver, table: ShelvedTable, shelf: Shelf): Promise<boolean> {
  const name = partitionName(table, shelf);
  return driver.transaction(
    async (tx) => {
      await tx.query(LOCK);
      const [exists] = await tx.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [name]);
      if (exists?.found) return false;
      const [from, to] = [shelfLiteral(shelf), shelfLiteral(addMonths(shelf, 1))];
      await tx.query(`CREATE TABLE ${ident(name)} (LIKE ${ident(table)} INCLUDING DEFAULTS)`);
      // A check constraint of the bounds lets ATTACH skip its scan of the new table.
      await tx.query(
        `ALTER TABLE ${ident(name)} ADD CONSTRAINT ${ident(`${name}_shelf`)} CHECK (shelf >= ${from} AND shelf < ${to})`,
      );
      await tx.query(
        `WITH moved AS (DELETE FROM ${ident(defaultPartition(table))} WHERE shelf >= $1::date AND shelf < $2::date RETURNING *)
         INSERT INTO ${ident(name)} SELECT * FROM moved`,
        [shelf, addMonths(shelf, 1)],
      );
      await tx.query(
        `ALTER TABLE ${ident(table)} ATTACH PARTITION ${ident(name)} FOR VALUES FROM (${from}) TO (${to})`,
      );
      await tx.query(`ALTER TABLE ${ident(name)} DROP CONSTRAINT ${ident(`${name}_shelf`)}`);
      return true;
    },
    { settings: ["lock_timeout = '10s'"] },
  );
}

/** The months whose rows wait in a table's default partition. */
async function shelvesInDefault(sql: Sql, table: ShelvedTable): Promise<Shelf[]> {
  const rows = await sql.query<{ shelf: string }>(
    `SELECT DISTINCT shelf::text AS shelf FROM ${ident(defaultPartition(table))} ORDER BY 1`,
  );
  return rows.map((r) => shelfOf(new Date(`${r.shelf}T00:00:00Z`)));
}

/**
 * Makes this month's and the next MONTHS_AHEAD months' partitions, and one for every month that has rows in
 * the default partition. Returns the partitions it made. Safe in several instances at once.
 */
export async function ensurePartitions(driver: SqlDriver, now: Date): Promise<string[]> {
  const made: string[] = [];
  for (const { table } of shelvedTables) {
    const existing = new Set((await listShelfPartitions(driver, table)).map((p) => p.shelf));
    const wanted = new Set([...shelvesAhead(now, MONTHS_AHEAD), ...(await shelvesInDefault(driver, table))]);
    for (const shelf of [...wanted].sort()) {
      if (!existing.has(shelf) && (await makePartition(driver, table, shelf))) made.push(partitionName(table, shelf));
    }
  }
  return made;
}
