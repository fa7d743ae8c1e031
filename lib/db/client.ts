import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { env } from "../env";
import { DataDirInUseError } from "./data-dir-lock";
import { createEmbeddedClientDriver, createPgliteDriver, createPostgresDriver, type SqlDriver } from "./driver";
import { assertOwnSocket, embeddedConnection, embeddedIsServed } from "./embedded-socket";
import { PrismaClient } from "./generated/client";
import { applyMigrations, pendingMigrations } from "./migrate";
import { processWide } from "../process-wide";

export type Prisma = InstanceType<typeof PrismaClient>;
export type Db = { prisma: Prisma; driver: SqlDriver };

// One database per process (lib/process-wide.ts): Next.js bundles route
// handlers, pages and instrumentation separately, and PGlite's data directory
// may only be opened once.
const holder = processWide("database", () => ({
  db: undefined as Promise<Db> | undefined,
  joinWhenInUse: false,
}));

/**
 * A command line's choice: when another process (the server) holds the
 * embedded database, work through the socket it serves instead of failing.
 * The server never joins another process, whose exit would take its database away.
 */
export function joinEmbeddedDatabaseWhenInUse(): void {
  holder.joinWhenInUse = true;
}

/**
 * An embedded database's directory, opened here (served to other processes when `share`), or through the socket
 * of the process that holds it when `join`.
 */
export async function openEmbeddedDriver(
  dataDir: string,
  options: { share: boolean; join: boolean },
): Promise<SqlDriver> {
  const { share, join } = options;
  try {
    return await createPgliteDriver(dataDir, { share });
  } catch (error) {
    if (!(error instanceof DataDirInUseError) || !join || !embeddedIsServed(dataDir)) throw error;
    // Only to a socket this user owns: another account may have made the folder first (lib/db/embedded-socket.ts).
    assertOwnSocket(dataDir);
    return createEmbeddedClientDriver(embeddedConnection(dataDir));
  }
}

const openEmbedded = (dataDir: string) => openEmbeddedDriver(dataDir, { share: true, join: holder.joinWhenInUse });

export class MigrationsPendingError extends Error {
  constructor(readonly pending: string[]) {
    super(`The database needs migrations (${pending.join(", ")}). Run: npm run -s settle -- migrate`);
  }
}

/** The SQL driver of the configured database, not migrated: PostgreSQL, or the embedded one (joined when in use, if asked). */
export async function openSqlDriver(poolSize = env().SETTLE_DB_POOL_SIZE): Promise<SqlDriver> {
  const settings = env();
  return settings.DATABASE_URL
    ? createPostgresDriver(settings.DATABASE_URL, poolSize)
    : openEmbedded(settings.SETTLE_DATA_DIR);
}

async function open(): Promise<Db> {
  const settings = env();
  const driver = await openSqlDriver();
  try {
    // Embedded and development databases follow the code; a production
    // PostgreSQL is migrated on purpose, with `settle migrate`.
    if (driver.kind === "pglite" || settings.NODE_ENV !== "production") {
      await applyMigrations(driver);
    } else {
      const pending = await pendingMigrations(driver);
      if (pending.length > 0) throw new MigrationsPendingError(pending.map((m) => m.name));
    }
  } catch (error) {
    await driver.close().catch(() => {});
    throw error;
  }
  const adapter = driver.pool ? new PrismaPg(driver.pool) : new PrismaPGlite(driver.pglite!);
  return { prisma: new PrismaClient({ adapter }), driver };
}

export function getDb(): Promise<Db> {
  if (!holder.db) {
    holder.db = open();
    // A failed open (database down at start-up) is retried on the next call.
    holder.db.catch(() => {
      holder.db = undefined;
    });
  }
  return holder.db;
}

export async function closeDb(): Promise<void> {
  const pending = holder.db;
  holder.db = undefined;
  if (!pending) return;
  const db = await pending.catch(() => null);
  if (!db) return;
  await db.prisma.$disconnect();
  await db.driver.close();
}
