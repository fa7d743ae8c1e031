import pg from "pg";
import type { PGlite } from "@electric-sql/pglite";
import { lockDataDir } from "./data-dir-lock";
import { serveEmbedded } from "./embedded-socket";
import { claimEmbeddedDirectories, tightenTree } from "./private-dir";
import { parseExactJson } from "../json/exact";

// The database underneath Prisma: a PostgreSQL pool, or PGlite (in-process
// PostgreSQL) when no DATABASE_URL is set. The migration runner, the ingest
// hot path and the benchmark baseline talk to it directly; everything else
// goes through Prisma.

/**
 * `prepareAs` names the statement, so a connection parses and plans it once (PostgreSQL; PGlite ignores it).
 * `exactJson`: its json and jsonb columns are read with lib/json's exact reading, so a caller's integer past
 * 2^53 comes back as a BigInt with its digits (jsonb keeps them); for statements that read a caller's values
 * to show them (arguments, envelopes), as the others' readers expect numbers.
 */
export type QueryOptions = { prepareAs?: string; exactJson?: boolean };

export type SqlSession = {
  query: <T = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions) => Promise<T[]>;
  /** Runs a whole script as one simple query: one implicit transaction. */
  exec: (script: string) => Promise<void>;
};

/** Where a statement runs, inside a transaction (`Tx`) or not (`db.driver`): bound parameters only. */
export type Sql = { query: <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]> };

/** A statement for `Tx.query`: `name` makes PostgreSQL parse and plan it once per connection (PGlite ignores it). */
export type Statement = { name?: string; text: string };

/** A transaction's one operation: a statement with bound parameters, never with request text in its SQL. */
export type Tx = {
  query: <T = Record<string, unknown>>(
    statement: Statement | string,
    params?: unknown[],
    options?: Pick<QueryOptions, "exactJson">,
  ) => Promise<T[]>;
};

/**
 * Fixed settings for one transaction (`SET LOCAL`), sent with its BEGIN in
 * one round trip. Constants of the calling code only, never request data.
 */
export type TransactionOptions = { settings?: readonly string[] };

export type SqlDriver = SqlSession & {
  kind: "postgres" | "pglite";
  /** A session that keeps one connection, for session-scoped locks. */
  withSession: <T>(fn: (session: SqlSession) => Promise<T>) => Promise<T>;
  /** A transaction: committed when `fn` resolves, rolled back when it throws. */
  transaction: <T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions) => Promise<T>;
  /**
   * The write path's statements outside a transaction, each its own (one
   * round trip, atomic). On PostgreSQL its own connections, whose plans never
   * scan a table and whose statements give up after 30 s (see `WRITE_SETTINGS`).
   */
  write: Tx;
  close: () => Promise<void>;
  pool?: pg.Pool;
  pglite?: PGlite;
};

/**
 * A timestamp as PostgreSQL writes it ("0001-01-01 00:00:00+00") as an ISO
 * string. Read as ISO 8601, never by Date's lenient parser, which takes year
 * 0001 for 2001. Values without an offset (timestamp) are UTC.
 */
export function isoFromPg(value: string): string {
  const iso = value.replace(" ", "T");
  const zoned = /[+-]\d\d(:\d\d){0,2}$/.test(iso.slice(19)) ? iso.replace(/([+-]\d\d)$/, "$1:00") : `${iso}Z`;
  return new Date(zoned).toISOString();
}

// Dates stay ISO strings and bigints stay exact: the domain code decides types.
const types = {
  getTypeParser: (oid: number, format?: string) => {
    if (oid === 1184 || oid === 1114) return isoFromPg;
    return pg.types.getTypeParser(oid, format as "text");
  },
};
const JSON_OIDS = [114, 3802];
const exactTypes = {
  getTypeParser: (oid: number, format?: string) =>
    JSON_OIDS.includes(oid) ? parseExactJson : types.getTypeParser(oid, format),
};

/**
 * The write path's connections. Its statements are prepared once per
 * connection and always run their generic plan: PostgreSQL would otherwise
 * plan some of them again on every run, since a plan for the exact array
 * sizes looks cheaper, and pay more for planning than for running. The plan
 * may have been made while the tables were small, when a sequential scan
 * looks cheapest; every lookup they make is by a key, so they never scan
 * (and lib/db/planner-stats.ts has it planned again as the tables grow). A
 * statement that waits more than 30 s (for a lock) gives up instead of
 * holding its connection.
 */
const WRITE_SETTINGS = "-c enable_seqscan=off -c statement_timeout=30s -c plan_cache_mode=force_generic_plan";

function newPool(connectionString: string, max: number, applicationName: string, options = ""): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: applicationName,
    // Timestamps are read and written in UTC whatever the server's time zone.
    options: `-c TimeZone=UTC ${options}`.trim(),
  });
  // A dropped connection must not crash the process; the next query reports it.
  pool.on("error", () => {});
  return pool;
}

/** An error PostgreSQL answered with (it has a SQLSTATE): the connection is still good. */
const answered = (error: unknown) =>
  typeof (error as { code?: unknown })?.code === "string" && /^[0-9A-Z]{5}$/.test((error as { code: string }).code);

/**
 * One query on a pooled connection. pg's `pool.query` closes the connection
 * on any error, so every refused write (a conflict, a value PostgreSQL
 * refuses) would cost a new connection, and PostgreSQL a new backend process;
 * here only a connection that failed is dropped.
 */
async function pooledQuery(pool: pg.Pool, config: pg.QueryConfig): Promise<pg.QueryResult> {
  const client = await pool.connect();
  // A connection that drops mid-query also emits "error": heard here, it fails the query, not the process.
  let lost: Error | null = null;
  const onError = (error: Error) => {
    lost = error;
  };
  client.on("error", onError);
  try {
    const result = await client.query(config);
    client.removeListener("error", onError);
    client.release(lost ?? undefined);
    return result;
  } catch (error) {
    client.removeListener("error", onError);
    client.release(lost ?? (answered(error) ? undefined : (error as Error)));
    throw error;
  }
}

/** Statements on a pool or one connection, with Settle's readers of timestamps (ISO strings) and bigints. */
export const txOf = (client: pg.Pool | pg.PoolClient | pg.Client, named = true): Tx => ({
  query: async <T>(statement: Statement | string, params: unknown[] = [], options: QueryOptions = {}) => {
    const { name, text } = typeof statement === "string" ? { name: undefined, text: statement } : statement;
    const config = {
      name: named ? name : undefined,
      text,
      values: params,
      types: options.exactJson ? exactTypes : types,
    };
    return (client instanceof pg.Pool ? await pooledQuery(client, config) : await client.query(config)).rows as T[];
  },
});

/**
 * Another process's embedded database, through the socket it serves
 * (lib/db/embedded-socket.ts). PGlite is one session shared by every client,
 * so nothing here names a statement (a name would outlive this process and
 * refuse the next one's) or changes a session setting, and one connection
 * does all the work, as PGlite does in-process.
 */
export function createEmbeddedClientDriver(connection: pg.PoolConfig): SqlDriver {
  // A busy server answers a new client between its own statements: on a loaded machine that can take seconds.
  const pool = new pg.Pool({ ...connection, max: 1, connectionTimeoutMillis: 30_000, application_name: "settle-cli" });
  pool.on("error", () => {});
  const driver = postgresDriverOn(pool, pool, false);
  // Every statement already runs in PGlite's one session, as in-process: a session of its own would hold the one
  // connection while the work inside it asked the pool for another, and wait for ever (retention run did).
  const session: SqlSession = { query: driver.query, exec: driver.exec };
  return { ...driver, withSession: (fn) => fn(session), kind: "pglite" };
}

export function createPostgresDriver(connectionString: string, max: number): SqlDriver {
  return postgresDriverOn(
    newPool(connectionString, max, "settle"),
    newPool(connectionString, max, "settle-write", WRITE_SETTINGS),
    true,
  );
}

function postgresDriverOn(pool: pg.Pool, writePool: pg.Pool, named: boolean): SqlDriver {
  const sessionOf = (client: pg.Pool | pg.PoolClient): SqlSession => ({
    query: async <T>(text: string, params: unknown[] = [], options: QueryOptions = {}) => {
      const config = {
        name: named ? options.prepareAs : undefined,
        text,
        values: params,
        types: options.exactJson ? exactTypes : types,
      };
      return (client instanceof pg.Pool ? await pooledQuery(client, config) : await client.query(config)).rows as T[];
    },
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
      let lost = false;
      const onError = () => {
        lost = true;
      };
      client.on("error", onError);
      try {
        return await fn(sessionOf(client));
      } finally {
        client.removeListener("error", onError);
        client.release(lost ? true : undefined);
      }
    },
    write: txOf(writePool, named),
    transaction: async (fn, options = {}) => {
      const client = await pool.connect();
      const onError = () => {}; // a dropped connection fails the statement in flight, and ROLLBACK below discards it
      client.on("error", onError);
      const tx = txOf(client, named);
      try {
        await client.query(["BEGIN", ...(options.settings ?? []).map((s) => `SET LOCAL ${s}`)].join("; "));
        const value = await fn(tx);
        await client.query("COMMIT");
        client.removeListener("error", onError);
        client.release();
        return value;
      } catch (error) {
        // A connection that cannot even roll back is discarded.
        let healthy = true;
        try {
          await client.query("ROLLBACK");
        } catch {
          healthy = false;
        }
        client.removeListener("error", onError);
        client.release(healthy ? undefined : true);
        throw error;
      }
    },
    close: async () => {
      await Promise.all(pool === writePool ? [pool.end()] : [pool.end(), writePool.end()]);
    },
  };
}

/**
 * `share` serves the database to this machine's other processes while this one holds it
 * (lib/db/embedded-socket.ts); `idleInTransactionMs` is how long a client of it may sit in a transaction.
 */
export async function createPgliteDriver(
  dataDir: string,
  options: { share?: boolean; idleInTransactionMs?: number } = {},
): Promise<SqlDriver> {
  const { PGlite } = await import("@electric-sql/pglite");
  // The queue's search index (migration *_queue_search) needs pg_trgm, which PGlite ships but loads only when asked.
  const { pg_trgm } = await import("@electric-sql/pglite/contrib/pg_trgm");
  const inMemory = dataDir.startsWith("memory://");
  // Other accounts of this machine must not read it: its folders 0700, its files 0600 (lib/db/private-dir.ts).
  if (!inMemory) claimEmbeddedDirectories(dataDir);
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir, { extensions: { pg_trgm } });
    // PGlite writes a new database's first files 0666, and an older Settle left them so.
    if (!inMemory) tightenTree(dataDir);
  } catch (error) {
    unlock();
    throw error;
  }
  let stopServing = async () => {};
  if (options.share && !inMemory) {
    try {
      stopServing = await serveEmbedded(db, dataDir, options.idleInTransactionMs);
    } catch (error) {
      // Not fatal: this process works; other processes get the "in use" error instead.
      console.warn(`Settle: the embedded database is not served to other processes: ${(error as Error).message}`);
    }
  }
  const parsers = { 1184: isoFromPg, 1114: isoFromPg };
  const exactParsers = { ...parsers, 114: parseExactJson, 3802: parseExactJson };
  const session: SqlSession = {
    query: async <T>(text: string, params: unknown[] = [], options: QueryOptions = {}) => {
      const result = await db.query<T>(text, params, { parsers: options.exactJson ? exactParsers : parsers });
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
    // In-process and one query at a time: no plan outlives its query, and nothing waits on a lock.
    write: {
      query: async <T>(statement: Statement | string, params: unknown[] = [], options: QueryOptions = {}) =>
        (
          await db.query<T>(typeof statement === "string" ? statement : statement.text, params, {
            parsers: options.exactJson ? exactParsers : parsers,
          })
        ).rows,
    },
    // PGlite runs in-process: its transaction() keeps other queries out meanwhile.
    transaction: (fn, options = {}) =>
      db.transaction(async (t) => {
        for (const setting of options.settings ?? []) await t.exec(`SET LOCAL ${setting}`);
        return fn({
          query: async <T>(statement: Statement | string, params: unknown[] = [], options: QueryOptions = {}) =>
            (
              await t.query<T>(typeof statement === "string" ? statement : statement.text, params, {
                parsers: options.exactJson ? exactParsers : parsers,
              })
            ).rows,
        });
      }),
    close: async () => {
      await stopServing();
      await db.close();
      unlock();
    },
  };
}
