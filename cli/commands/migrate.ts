import { joinEmbeddedDatabaseWhenInUse, openSqlDriver } from "@/lib/db/client";
import { applyMigrations, readMigrations } from "@/lib/db/migrate";
import type { Command } from "../args";
import { assertProjectDirectory, describeDatabase } from "../database";
import { printLine } from "../io";
import { plural } from "../table";

export const migrate: Command = {
  name: "migrate",
  summary: "apply pending database migrations",
  help: `Usage: settle migrate

Applies the migrations in prisma/migrations that the database does not have
yet, in order, each in its own transaction, and records them in
_prisma_migrations exactly as Prisma's own 'migrate deploy' would. Works on
DATABASE_URL, or on the embedded database in SETTLE_DATA_DIR when DATABASE_URL
is not set. Safe to run again and from several machines at once (an advisory
lock makes them take turns).

Example:
  DATABASE_URL=postgresql://settle@db/settle npm run -s settle -- migrate`,
  options: {},
  args: { min: 0, max: 0 },
  run: async (_input, io) => {
    assertProjectDirectory();
    const migrations = readMigrations();
    // Not getDb(): it would apply the migrations itself before we could report them.
    joinEmbeddedDatabaseWhenInUse();
    const driver = await openSqlDriver(1);
    printLine(
      io.stderr,
      `Migrating ${describeDatabase()} (${plural(migrations.length, "migration")} in prisma/migrations)`,
    );
    try {
      const report = await applyMigrations(driver, migrations);
      for (const name of report.applied) printLine(io.stdout, `Applied ${name}`);
      for (const name of report.checksumMismatches) {
        printLine(
          io.stderr,
          `warning: ${name} was changed after it was applied (its checksum differs); the database keeps the old version`,
        );
      }
      printLine(
        io.stdout,
        report.applied.length === 0
          ? `Database is up to date (${report.alreadyApplied} already applied).`
          : `${report.applied.length} applied, ${report.alreadyApplied} already applied.`,
      );
      return 0;
    } finally {
      await driver.close();
    }
  },
};
