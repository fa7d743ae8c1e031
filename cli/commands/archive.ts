import { existsSync } from "node:fs";
import path from "node:path";
import { openEmbeddedDriver } from "@/lib/db/client";
import { createPostgresDriver, type SqlDriver } from "@/lib/db/driver";
import { applyMigrations } from "@/lib/db/migrate";
import { env } from "@/lib/env";
import { ArchiveError, readManifest, verifyArchive } from "@/lib/retention/archive";
import { restoreArchive } from "@/lib/retention/restore";
import { requiredString, stringOption, type Command } from "../args";
import { assertProjectDirectory } from "../database";
import { CliError } from "../errors";
import { printLine } from "../io";
import { formatCount, formatTable, plural, shortTime } from "../table";

// `settle archive …`: what retention archived before it dropped or deleted it (docs/operations.md "Data
// retention"), and bringing a file back into a database for an investigation.

export const archiveList: Command = {
  name: "archive list",
  summary: "list the archive's files, each checked against its SHA-256",
  help: `Usage: settle archive list [--dir <directory>] [--json]

Lists every file in the archive's manifest: the table and partition (or batch)
it came from, its rows and size, and whether it is there with the bytes it
was written with (ok, missing or damaged).

Options:
  --dir <directory>   the archive directory (default: SETTLE_ARCHIVE_DIR)
  --json              print JSON instead of a table

Example:
  npm run -s settle -- archive list`,
  options: { dir: { type: "string" }, json: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const dir = stringOption(values, "dir") ?? env().SETTLE_ARCHIVE_DIR;
    const manifest = await readManifest(dir).catch((error: Error) => {
      throw new CliError(error.message);
    });
    const files = await Promise.all(manifest.files.map(async (f) => ({ ...f, check: await verifyArchive(dir, f) })));
    if (values.json) {
      printLine(io.stdout, JSON.stringify(files, null, 2));
      return files.every((f) => f.check === "ok") ? 0 : 1;
    }
    if (files.length === 0) {
      printLine(io.stderr, `The archive in ${dir} is empty: retention has not retired anything yet.`);
      return 0;
    }
    const rows = files.map((f) => [
      f.file,
      f.table,
      f.shelf?.slice(0, 7) ?? "-",
      formatCount(f.rows),
      `${Math.max(1, Math.round(f.bytes / 1024))} KiB`,
      shortTime(f.archived_at),
      f.check,
    ]);
    printLine(io.stdout, formatTable(["FILE", "TABLE", "MONTH", "ROWS", "SIZE", "ARCHIVED", "CHECK"], rows));
    const bad = files.filter((f) => f.check !== "ok");
    if (bad.length > 0) printLine(io.stderr, `${plural(bad.length, "file")} missing or damaged.`);
    return bad.length === 0 ? 0 : 1;
  },
};

async function openTarget(into: string): Promise<SqlDriver> {
  if (/^postgres(ql)?:\/\//.test(into)) return createPostgresDriver(into, 1);
  if (into.includes("://") && !into.startsWith("memory://")) {
    throw new CliError(`--into takes a postgresql:// URL or a directory for an embedded database, not ${into}`);
  }
  // The live embedded database, held by the running server, is reached through it.
  return openEmbeddedDriver(into, { share: false, join: true });
}

export const archiveRestore: Command = {
  name: "archive restore",
  summary: "bring an archived file's rows back into a database",
  help: `Usage: settle archive restore <file> --into <database>

Checks the file against the SHA-256 its manifest lists, migrates the target
database if it needs it, and inserts the file's rows into their table (a
month's rows into that month's partition, made if missing), in one
transaction. Rows already there are left as they are, so it can run again.
<database> is a postgresql:// URL, or a directory for an embedded database
(made if missing): restore into a scratch database for an investigation.

Example:
  npm run -s settle -- archive restore .settle/archive/attempts_p2026_08.jsonl.gz --into ./.settle/investigation`,
  options: { into: { type: "string" } },
  args: { min: 1, max: 1 },
  run: async ({ args, values }, io) => {
    assertProjectDirectory();
    const file = args[0]!;
    const into = requiredString(values, "into");
    if (!existsSync(file)) throw new CliError(`${file} does not exist`);
    const driver = await openTarget(into);
    try {
      await applyMigrations(driver);
      const report = await restoreArchive(driver, path.resolve(file));
      printLine(
        io.stdout,
        `Restored ${plural(report.rows, "row")} of ${report.table} (from ${report.source}) into ${into.replace(/\/\/[^@/]*@/, "//")}`,
      );
      return 0;
    } catch (error) {
      if (error instanceof ArchiveError) throw new CliError(error.message);
      throw error;
    } finally {
      await driver.close();
    }
  },
};
