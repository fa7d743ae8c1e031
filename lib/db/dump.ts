import type { SqlDriver, Tx } from "./driver";

// `settle export` / `settle import`: a consistent, portable dump of Settle's
// tables as JSON Lines (the CLI gzips it). One header line (the format and the
// migrations applied), then per table a line naming it and its row count, then
// its rows as row_to_json gives them. Read in one repeatable-read transaction,
// so the dump is one moment even while the server writes (on the embedded
// database the server waits meanwhile); written in one transaction into a
// database migrated to the same migrations, so an import is all or nothing.
// Works on PostgreSQL and the embedded database alike, so it also moves an
// embedded installation to PostgreSQL.

export const DUMP_FORMAT = "settle-dump/1";
const PAGE = 2_000;

export type DumpHeader = { format: typeof DUMP_FORMAT; exported_at: string; migrations: string[] };
/** A table's heading: `$` names, which no column of Settle's has, so a row is never taken for one. */
export type TableHeading = { $table: string; $rows: number };
export type DumpLine = DumpHeader | TableHeading | Record<string, unknown>;
export type TableCount = { table: string; rows: number };

/** An identifier from the catalog (never from a request), quoted for SQL. */
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

type TableInfo = { name: string; keys: string[] };

/** Settle's tables, parents before children (by their foreign keys), each with its primary key's columns. */
async function tablesInOrder(tx: Tx): Promise<TableInfo[]> {
  const tables = await tx.query<{ name: string; keys: string[] | null }>(
    `SELECT c.relname AS name,
            (SELECT array_agg(a.attname::text ORDER BY k.i)
               FROM pg_index x
              CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, i)
               JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              WHERE x.indrelid = c.oid AND x.indisprimary) AS keys
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND c.relname <> '_prisma_migrations'
      ORDER BY c.relname`,
  );
  const edges = await tx.query<{ child: string; parent: string }>(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = 'public' AND c.conrelid <> c.confrelid`,
  );
  const unquote = (name: string) => name.replace(/^"(.*)"$/, "$1").replaceAll('""', '"');
  const parents = new Map(tables.map((t) => [t.name, new Set<string>()]));
  for (const e of edges) parents.get(unquote(e.child))?.add(unquote(e.parent));
  const ordered: TableInfo[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const ready = tables.filter((t) => !placed.has(t.name) && [...parents.get(t.name)!].every((p) => placed.has(p)));
    // A cycle of foreign keys (none today) would stall the sort: take the rest as they come.
    for (const t of ready.length > 0 ? ready : tables.filter((t) => !placed.has(t.name))) {
      placed.add(t.name);
      ordered.push({ name: t.name, keys: t.keys ?? [] });
    }
  }
  return ordered;
}

async function appliedMigrations(tx: Tx): Promise<string[]> {
  const rows = await tx.query<{ migration_name: string }>(
    `SELECT migration_name FROM "_prisma_migrations"
      WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  );
  return rows.map((r) => r.migration_name);
}

/** Writes the dump line by line through `write`; returns each table's row count. */
export async function exportDatabase(
  driver: SqlDriver,
  write: (line: DumpLine) => Promise<void>,
  now = new Date(),
): Promise<TableCount[]> {
  return driver.transaction(
    async (tx) => {
      await write({ format: DUMP_FORMAT, exported_at: now.toISOString(), migrations: await appliedMigrations(tx) });
      const counts: TableCount[] = [];
      for (const table of await tablesInOrder(tx)) {
        const [{ n } = { n: 0 }] = await tx.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${quoted(table.name)}`,
        );
        await write({ $table: table.name, $rows: n });
        const order = table.keys.length > 0 ? `ORDER BY ${table.keys.map(quoted).join(", ")}` : "";
        for (let offset = 0; offset < n; offset += PAGE) {
          const rows = await tx.query<{ row: Record<string, unknown> }>(
            `SELECT row_to_json(t) AS row FROM ${quoted(table.name)} t ${order} LIMIT $1 OFFSET $2`,
            [PAGE, offset],
          );
          for (const { row } of rows) await write(row);
        }
        counts.push({ table: table.name, rows: n });
      }
      return counts;
    },
    { settings: ["transaction_isolation = 'repeatable read'", "transaction_read_only = on"] },
  );
}

export class DumpError extends Error {}

/**
 * Tables whose rows a migration writes, so an empty database already has them: the settings version's
 * one row (decision 040) and the admin chain's first head (decision 041). They do not count as data.
 */
const SEEDED_BY_MIGRATIONS = new Set(["settings_version", "audit_chain_heads"]);

/**
 * Loads a dump into `driver`'s database, which must be migrated to exactly the
 * dump's migrations and hold no data yet. Triggers are off while the rows go in
 * (they are copied as they were, derived rows included); foreign keys are checked.
 */
export async function importDatabase(
  driver: SqlDriver,
  lines: AsyncIterable<DumpLine>,
  onTable: (count: TableCount) => void = () => {},
): Promise<TableCount[]> {
  return driver.transaction(async (tx) => {
    const iterator = lines[Symbol.asyncIterator]();
    const first = await iterator.next();
    const header = first.value as DumpHeader | undefined;
    if (first.done || header?.format !== DUMP_FORMAT) throw new DumpError(`not a Settle dump (${DUMP_FORMAT})`);
    const here = await appliedMigrations(tx);
    if (here.join() !== header.migrations.join()) {
      throw new DumpError(
        `the dump was made at migration ${header.migrations.at(-1) ?? "(none)"}, this database is at ${here.at(-1) ?? "(none)"}: ` +
          "run the same version of Settle (settle migrate) on an empty database",
      );
    }
    const tables = await tablesInOrder(tx);
    const known = new Set(tables.map((t) => t.name));
    for (const table of tables) {
      const [{ n } = { n: 0 }] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quoted(table.name)}`);
      if (n > 0 && !SEEDED_BY_MIGRATIONS.has(table.name)) {
        throw new DumpError(`the database already holds data (${table.name}): import into an empty one`);
      }
      await tx.query(`ALTER TABLE ${quoted(table.name)} DISABLE TRIGGER USER`);
      // The dump holds the source's own copy of these rows.
      if (SEEDED_BY_MIGRATIONS.has(table.name)) await tx.query(`DELETE FROM ${quoted(table.name)}`);
    }
    const counts: TableCount[] = [];
    const insert = async (table: string, rows: unknown[]) => {
      if (rows.length === 0) return;
      await tx.query(
        `INSERT INTO ${quoted(table)} SELECT * FROM json_populate_recordset(NULL::${quoted(table)}, $1::json)`,
        [JSON.stringify(rows)],
      );
    };
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const heading = next.value as Partial<TableHeading>;
      if (typeof heading.$table !== "string" || typeof heading.$rows !== "number")
        throw new DumpError("the dump is damaged: a table's heading was expected");
      if (!known.has(heading.$table))
        throw new DumpError(`the dump names a table this database does not have: ${heading.$table}`);
      let batch: unknown[] = [];
      for (let i = 0; i < heading.$rows; i += 1) {
        const row = await iterator.next();
        if (row.done) throw new DumpError(`the dump ends inside ${heading.$table}`);
        batch.push(row.value);
        if (batch.length >= PAGE) {
          await insert(heading.$table, batch);
          batch = [];
        }
      }
      await insert(heading.$table, batch);
      const count = { table: heading.$table, rows: heading.$rows };
      counts.push(count);
      onTable(count);
    }
    for (const table of tables) await tx.query(`ALTER TABLE ${quoted(table.name)} ENABLE TRIGGER USER`);
    // Sequences behind identity and serial columns continue after the rows that came in.
    const sequences = await tx.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND (column_default LIKE 'nextval(%' OR is_identity = 'YES')`,
    );
    for (const s of sequences) {
      await tx.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), greatest(coalesce((SELECT max(${quoted(s.column_name)}) FROM ${quoted(s.table_name)}), 0), 1))`,
        [quoted(s.table_name), s.column_name],
      );
    }
    return counts;
  });
}
