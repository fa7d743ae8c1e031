import { chmodSync, createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { once } from "node:events";
import { createGunzip, createGzip } from "node:zlib";
import { joinEmbeddedDatabaseWhenInUse, openSqlDriver } from "@/lib/db/client";
import { DumpError, exportDatabase, importDatabase, type DumpLine } from "@/lib/db/dump";
import { applyMigrations } from "@/lib/db/migrate";
import type { Command } from "../args";
import { assertProjectDirectory, describeDatabase } from "../database";
import { CliError } from "../errors";
import { printLine } from "../io";
import { plural } from "../table";

// `settle export` and `settle import`: the backup of the embedded database
// (docs/operations.md), and a way to move an installation between databases.

const total = (counts: { rows: number }[]) => counts.reduce((n, c) => n + c.rows, 0);

export const exportCommand: Command = {
  name: "export",
  summary: "write a consistent dump of the database to a file (gzipped JSON Lines)",
  help: `Usage: settle export <file.jsonl.gz>

Writes every table of Settle's database, as of one moment, to <file>:
gzipped JSON Lines (plain when the name does not end in .gz), readable by
you alone (0600: it holds webhook signing secrets and password hashes),
in a folder made for it 0700 when missing. Works on the
embedded database while the server runs (it waits for the dump meanwhile)
and on DATABASE_URL. The file is written under a temporary name and renamed
when complete, so a dump that stopped half-way never looks like a backup.
Restore it with 'settle import'.

Example:
  npm run -s settle -- export backups/settle-$(date +%F).jsonl.gz`,
  options: {},
  args: { min: 1, max: 1 },
  run: async ({ args }, io) => {
    assertProjectDirectory();
    const file = args[0]!;
    const partial = `${file}.partial`;
    // A dump holds webhook signing secrets and password hashes: the file is its owner's alone (0600), and a
    // folder made for it too (0700).
    if (!existsSync(path.dirname(file))) mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    joinEmbeddedDatabaseWhenInUse();
    const driver = await openSqlDriver(1);
    const out = createWriteStream(partial, { mode: 0o600 });
    const gzip = file.endsWith(".gz") ? createGzip() : null;
    gzip?.pipe(out);
    const sink = gzip ?? out;
    try {
      const counts = await exportDatabase(driver, async (line) => {
        if (!sink.write(`${JSON.stringify(line)}\n`)) await once(sink, "drain");
      });
      sink.end();
      await once(out, "close");
      chmodSync(partial, 0o600);
      renameSync(partial, file);
      printLine(
        io.stderr,
        `Exported ${plural(total(counts), "row")} of ${plural(counts.length, "table")} from ${describeDatabase()} to ${file}.`,
      );
      printLine(io.stdout, file);
      return 0;
    } catch (error) {
      out.destroy();
      rmSync(partial, { force: true });
      throw error;
    } finally {
      await driver.close();
    }
  },
};

async function* readDump(file: string): AsyncGenerator<DumpLine> {
  const input = createReadStream(file);
  const lines = createInterface({
    input: file.endsWith(".gz") ? input.pipe(createGunzip()) : input,
    crlfDelay: Infinity,
  });
  let n = 0;
  for await (const line of lines) {
    n += 1;
    if (line.trim() === "") continue;
    try {
      yield JSON.parse(line) as DumpLine;
    } catch {
      throw new DumpError(`line ${n} of ${file} is not JSON: the file is damaged or not a Settle dump`);
    }
  }
}

export const importCommand: Command = {
  name: "import",
  summary: "load a dump made by 'settle export' into an empty database",
  help: `Usage: settle import <file.jsonl.gz>

Migrates the database (DATABASE_URL, or the embedded one in SETTLE_DATA_DIR)
and loads the dump into it, all in one transaction: it must hold no data yet,
and be of the same Settle version as the one that made the dump. Restores a
backup of the embedded database, or moves an embedded installation to
PostgreSQL (export from one, import into the other).

Example:
  SETTLE_DATA_DIR=./.settle/restored npm run -s settle -- import backups/settle-2026-12-04.jsonl.gz`,
  options: {},
  args: { min: 1, max: 1 },
  run: async ({ args }, io) => {
    assertProjectDirectory();
    const file = args[0]!;
    if (!existsSync(file)) throw new CliError(`${file} does not exist`);
    joinEmbeddedDatabaseWhenInUse();
    const driver = await openSqlDriver(1);
    try {
      await applyMigrations(driver);
      const counts = await importDatabase(driver, readDump(file)).catch((error: unknown) => {
        throw error instanceof DumpError ? new CliError(`cannot import ${file}: ${error.message}`) : error;
      });
      printLine(
        io.stdout,
        `Imported ${plural(total(counts), "row")} of ${plural(counts.length, "table")} into ${describeDatabase()}.`,
      );
      return 0;
    } finally {
      await driver.close();
    }
  },
};
