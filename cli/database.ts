import { existsSync } from "node:fs";
import { closeDb, getDb, joinEmbeddedDatabaseWhenInUse, type Db } from "@/lib/db/client";
import { defaultMigrationsDir } from "@/lib/db/migrate";
import { env } from "@/lib/env";
import { CliError } from "./errors";

// The database a command works on: DATABASE_URL, or the embedded one in
// SETTLE_DATA_DIR. Both are found relative to the project directory.

/** Never shows a password: this line goes to terminals and CI logs. */
export function describeDatabase(): string {
  const { DATABASE_URL, SETTLE_DATA_DIR } = env();
  if (!DATABASE_URL) return `the embedded database in ${SETTLE_DATA_DIR}`;
  try {
    const url = new URL(DATABASE_URL);
    return `PostgreSQL at ${url.hostname}${url.port ? `:${url.port}` : ""}${url.pathname}`;
  } catch {
    return "PostgreSQL (DATABASE_URL)";
  }
}

/** The migrations, and the embedded database's default folder, are resolved from the working directory. */
export function assertProjectDirectory(): void {
  const dir = defaultMigrationsDir();
  if (!existsSync(dir)) {
    throw new CliError(
      `${dir} does not exist: run settle from the Settle project directory (npm run -s settle -- <command>)`,
    );
  }
}

/** Opens the database, runs `fn`, and always closes it so the process can exit. */
export async function withDatabase<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  assertProjectDirectory();
  // Beside `npm run dev` or `npm start`, which hold the embedded database, a command works through them.
  joinEmbeddedDatabaseWhenInUse();
  try {
    return await fn(await getDb());
  } finally {
    await closeDb();
  }
}
