import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { SqlDriver, SqlSession } from "./driver";

// Applies prisma/migrations the way Prisma's own engine does, and records them
// in `_prisma_migrations` exactly as it would, so `prisma migrate status` and
// `deploy` accept this history and this runner accepts theirs.
// Rules: docs/decisions/001-migration-runner.md (Prisma's own migration runner, followed to the letter).

const LOCK_ID = 72707369;
const LOCK_TIMEOUT_MS = 10_000;

export type Migration = { name: string; checksum: string; script: string };
export type MigrationReport = { applied: string[]; alreadyApplied: number; checksumMismatches: string[] };

export class MigrationError extends Error {
  constructor(
    readonly code: "P3005" | "P3009" | "P3018" | "P1002",
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export function defaultMigrationsDir(): string {
  // Resolved at run time from the app root; nothing to trace into the build.
  return path.join(/* turbopackIgnore: true */ process.cwd(), "prisma", "migrations");
}

export function readMigrations(dir = defaultMigrationsDir()): Migration[] {
  return readdirSync(dir)
    .filter((name) => statSync(path.join(dir, name)).isDirectory())
    .sort((a, b) => a.localeCompare(b))
    .map((name) => {
      const bytes = readFileSync(path.join(dir, name, "migration.sql"));
      return { name, checksum: createHash("sha256").update(bytes).digest("hex"), script: bytes.toString("utf8") };
    });
}

const createTable = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

async function lock(session: SqlSession): Promise<void> {
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    const [row] = await session.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [LOCK_ID]);
    if (row?.locked) return;
    if (Date.now() > deadline) throw new MigrationError("P1002", "timed out waiting for the migration lock");
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function ensureTable(session: SqlSession): Promise<void> {
  const [state] = await session.query<{ has_table: boolean; others: number }>(
    `SELECT
       EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = '_prisma_migrations') AS has_table,
       (SELECT count(*)::int FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations') AS others`,
  );
  if (state?.has_table) return;
  if ((state?.others ?? 0) > 0) {
    throw new MigrationError(
      "P3005",
      "the database schema is not empty and has no migration history; baseline it first",
    );
  }
  await session.exec(createTable);
}

type Row = { migration_name: string; checksum: string; finished_at: string | null; rolled_back_at: string | null };

export async function pendingMigrations(driver: SqlDriver, migrations = readMigrations()): Promise<Migration[]> {
  const [exists] = await driver.query<{ ok: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = '_prisma_migrations') AS ok",
  );
  if (!exists?.ok) return migrations;
  const rows = await driver.query<Row>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`,
  );
  const applied = new Set(rows.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
  return migrations.filter((m) => !applied.has(m.name));
}

export async function applyMigrations(driver: SqlDriver, migrations = readMigrations()): Promise<MigrationReport> {
  return driver.withSession(async (session) => {
    await lock(session);
    try {
      await ensureTable(session);
      const rows = await session.query<Row>(
        `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
      );
      const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
      if (failed) {
        throw new MigrationError(
          "P3009",
          `migration ${failed.migration_name} failed before; resolve it before applying more`,
        );
      }
      const live = rows.filter((r) => r.rolled_back_at === null);
      const byName = new Map(live.map((r) => [r.migration_name, r]));
      const report: MigrationReport = { applied: [], alreadyApplied: 0, checksumMismatches: [] };
      for (const m of migrations) {
        const row = byName.get(m.name);
        if (row) {
          report.alreadyApplied += 1;
          if (row.checksum !== m.checksum) report.checksumMismatches.push(m.name);
          continue;
        }
        const id = randomUUID();
        await session.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, started_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 0)`,
          [id, m.checksum, m.name],
        );
        try {
          await session.exec(m.script);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          await session.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [id, message]);
          throw new MigrationError("P3018", `migration ${m.name} failed: ${message}`);
        }
        await session.query(
          `UPDATE "_prisma_migrations" SET applied_steps_count = applied_steps_count + 1 WHERE id = $1`,
          [id],
        );
        await session.query(`UPDATE "_prisma_migrations" SET finished_at = now() WHERE id = $1`, [id]);
        report.applied.push(m.name);
      }
      return report;
    } finally {
      await session.query("SELECT pg_advisory_unlock($1)", [LOCK_ID]);
    }
  });
}
