import { MigrationsPendingError, type Db } from "./client";
import { pendingMigrations } from "./migrate";

export async function checkHealth(db: Db): Promise<{ ok: true; db: "up"; database: "postgres" | "pglite" }> {
  await db.driver.query("SELECT 1");
  return { ok: true, db: "up", database: db.driver.kind };
}

/** Ready: the database answers and no migration is pending (a pending one is refused before this, by getDb). */
export async function checkReadiness(
  db: Db,
): Promise<{ ready: true; database: "postgres" | "pglite"; migrations: number }> {
  const pending = await pendingMigrations(db.driver);
  if (pending.length > 0) throw new MigrationsPendingError(pending.map((m) => m.name));
  const [row] = await db.driver.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  return { ready: true, database: db.driver.kind, migrations: row?.n ?? 0 };
}
