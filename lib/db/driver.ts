import { mkdirSync } from "node:fs";
import pg from "pg";
import type { PGlite } from "@electric-sql/pglite";
import { lockDataDir } from "./data-dir-lock";

// The database underneath Prisma: a PostgreSQL pool, or PGlite (in-process
// PostgreSQL) when no DATABASE_URL is set. The migration runner and the
// benchmark baseline talk to it directly; everything else goes through Prisma.

export type SqlSession = {
  query: <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;
  /** Runs a whole script as one simple query: one implicit transaction. */
  exec: (script: string) => Promise<void>;
};

export type SqlDriver = SqlSession & {
  kind: "postgres" | "pglite";
  /** A session that keeps one connection, for session-scoped locks. */
  withSession: <T>(fn: (session: SqlSession) => Promise<T>) => Promise<T>;
  close: () => Promise<void>;
  pool?: pg.Pool;
  pglite?: PGlite;
};

// Dates stay ISO strings and bigints stay exact: the domain code decides types.
const types = {
  getTypeParser: (oid: number, format?: string) => {
    if (oid === 1184 || oid === 1114) return (v: string) => new Date(v).toISOString();
    return pg.types.getTypeParser(oid, format as "text");
  },
};

export function createPostgresDriver(connectionString: string, max: number): SqlDriver {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: "settle",
  });
  // A dropped connection must not crash the process; the next query reports it.
  pool.on("error", () => {});
  const sessionOf = (client: pg.Pool | pg.PoolClient): SqlSession => ({
    query: async <T>(text: string, params: unknown[] = []) => (await client.query({ text, values: params, types })).rows as T[],
    exec: async (script: string) => {
      await client.query(script);
    },
  });
  return {
    kind: "postgres",
    pool,
    ...sessionOf(pool),
    withSession: async (fn) => {
      const client = await pool.connect();
      try {
        return await fn(sessionOf(client));
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export async function createPgliteDriver(dataDir: string): Promise<SqlDriver> {
  const { PGlite } = await import("@electric-sql/pglite");
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir);
  } catch (error) {
    unlock();
    throw error;
  }
  const session: SqlSession = {
    query: async <T>(text: string, params: unknown[] = []) => {
      const result = await db.query<T>(text, params, {
        parsers: { 1184: (v: string) => new Date(v).toISOString(), 1114: (v: string) => new Date(v).toISOString() },
      });
      return result.rows;
    },
    exec: async (script: string) => {
      await db.exec(script);
    },
  };
  return {
    kind: "pglite",
    pglite: db,
    ...session,
    withSession: (fn) => fn(session),
    close: async () => {
      await db.close();
      unlock();
    },
  };
}
