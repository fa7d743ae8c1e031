import { mkdirSync } from "node:fs";
import pg from "pg";
import type { PGlite } from "@electric-sql/pglite";
import { lockDataDir } from "./data-dir-lock";

// The database underneath Prisma: a PostgreSQL pool, or PGlite (in-process
// PostgreSQL) when no DATABASE_URL is set. The migration runner, the ingest
// hot path and the benchmark baseline talk to it directly; everything else
// goes through Prisma.

export type SqlSession = {
  /** `prepareAs` names the statement, so a connection parses and plans it once (PostgreSQL; PGlite ignores it). */
  query: <T = Record<string, unknown>>(text: string, params?: unknown[], options?: { prepareAs?: string }) => Promise<T[]>;
  /** Runs a whole script as one simple query: one implicit transaction. */
  exec: (script: string) => Promise<void>;
};

export type ScriptRows = Array<Record<string, unknown>>;

/** Parsed and planned once per connection (SQL PREPARE), then only EXECUTEd. */
export type PreparedStatement = { name: string; params: string[]; text: string };

/** A statement for `ScriptTransaction.run`: plain SQL, or a prepared statement with SQL literals as arguments. */
export type ScriptStatement = string | { prepared: PreparedStatement; args: string[] };

export type ScriptTransaction = {
  /**
   * Runs statements without parameters (see `sqlLiteral`) as one simple query:
   * one round trip, each statement with its own snapshot. `commit` ends the
   * transaction in that same round trip. Returns each statement's rows, in order.
   */
  run: (statements: ScriptStatement[], options?: { commit?: boolean }) => Promise<ScriptRows[]>;
};

/** The text of one round trip, and where each statement's result is in the answer. */
function buildScript(statements: ScriptStatement[], preparedHere: Set<string>, wrap: { begin: boolean; commit: boolean }) {
  const parts: string[] = wrap.begin ? ["BEGIN"] : [];
  const positions: number[] = [];
  const preparing: string[] = [];
  for (const statement of statements) {
    if (typeof statement === "string") {
      positions.push(parts.length);
      parts.push(statement);
      continue;
    }
    const { name, params, text } = statement.prepared;
    if (!preparedHere.has(name) && !preparing.includes(name)) {
      parts.push(`PREPARE ${name} (${params.join(", ")}) AS ${text}`);
      preparing.push(name);
    }
    positions.push(parts.length);
    parts.push(`EXECUTE ${name}(${statement.args.join(", ")})`);
  }
  if (wrap.commit) parts.push("COMMIT");
  return { text: parts.join(";\n"), positions, preparing };
}

/** After a failure nobody knows which PREPAREs ran (they outlive a rollback): ask the session. */
async function preparedNames(query: (text: string) => Promise<ScriptRows>): Promise<Set<string>> {
  const rows = await query("SELECT name FROM pg_prepared_statements");
  return new Set(rows.map((r) => String(r.name)));
}

export type SqlDriver = SqlSession & {
  kind: "postgres" | "pglite";
  /** A session that keeps one connection, for session-scoped locks. */
  withSession: <T>(fn: (session: SqlSession) => Promise<T>) => Promise<T>;
  /**
   * A transaction in as few round trips as PostgreSQL allows: BEGIN travels
   * with the first statements, COMMIT with the last. Rolled back if `fn` throws.
   */
  scriptTransaction: <T>(fn: (tx: ScriptTransaction) => Promise<T>) => Promise<T>;
  close: () => Promise<void>;
  pool?: pg.Pool;
  pglite?: PGlite;
};

/**
 * A string as an SQL literal, dollar-quoted with a tag the text does not
 * contain, so nothing inside it needs escaping or can end it early.
 */
export function sqlLiteral(text: string): string {
  let tag = "$s$";
  for (let n = 0; text.includes(tag); n += 1) tag = `$s${n}$`;
  return `${tag}${text}${tag}`;
}

// Dates stay ISO strings and bigints stay exact: the domain code decides types.
const types = {
  getTypeParser: (oid: number, format?: string) => {
    if (oid === 1184 || oid === 1114) return (v: string) => new Date(v).toISOString();
    return pg.types.getTypeParser(oid, format as "text");
  },
};

export function createPostgresDriver(connectionString: string, max: number): SqlDriver {
  const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();
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
    query: async <T>(text: string, params: unknown[] = [], options: { prepareAs?: string } = {}) =>
      (await client.query({ name: options.prepareAs, text, values: params, types })).rows as T[],
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
    scriptTransaction: async (fn) => {
      const client = await pool.connect();
      const preparedHere = preparedOn.get(client) ?? new Set<string>();
      preparedOn.set(client, preparedHere);
      // Held in an object: the closures below change it behind the compiler's back.
      const progress: { state: "idle" | "open" | "committed" } = { state: "idle" };
      const tx: ScriptTransaction = {
        run: async (statements, { commit = false } = {}) => {
          if (progress.state === "committed") throw new Error("the transaction is already committed");
          const script = buildScript(statements, preparedHere, { begin: progress.state === "idle", commit });
          progress.state = "open";
          const results = await client.query({ text: script.text, types });
          if (commit) progress.state = "committed";
          for (const name of script.preparing) preparedHere.add(name);
          const all = (Array.isArray(results) ? results : [results]) as pg.QueryResult[];
          return script.positions.map((i) => all[i]!.rows as ScriptRows);
        },
      };
      try {
        const value = await fn(tx);
        if (progress.state === "open") await client.query("COMMIT");
        client.release();
        return value;
      } catch (error) {
        // A failed statement leaves the transaction aborted; a connection that cannot even roll back is discarded.
        let healthy = true;
        try {
          await client.query("ROLLBACK");
          preparedOn.set(client, await preparedNames(async (text) => (await client.query(text)).rows));
        } catch {
          healthy = false;
        }
        client.release(healthy ? undefined : true);
        throw error;
      }
    },
    close: () => pool.end(),
  };
}

export async function createPgliteDriver(dataDir: string): Promise<SqlDriver> {
  const { PGlite } = await import("@electric-sql/pglite");
  // The queue's search index (migration *_queue_search) needs pg_trgm, which PGlite ships but loads only when asked.
  const { pg_trgm } = await import("@electric-sql/pglite/contrib/pg_trgm");
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir, { extensions: { pg_trgm } });
  } catch (error) {
    unlock();
    throw error;
  }
  let preparedHere = new Set<string>();
  const parsers = { 1184: (v: string) => new Date(v).toISOString(), 1114: (v: string) => new Date(v).toISOString() };
  const session: SqlSession = {
    query: async <T>(text: string, params: unknown[] = []) => {
      const result = await db.query<T>(text, params, { parsers });
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
    // PGlite runs in-process: round trips cost nothing, and its transaction() keeps other queries out meanwhile.
    scriptTransaction: async (fn) => {
      try {
        return await db.transaction((t) =>
          fn({
            run: async (statements) => {
              const script = buildScript(statements, preparedHere, { begin: false, commit: false });
              const results = await t.exec(script.text, { parsers });
              for (const name of script.preparing) preparedHere.add(name);
              return script.positions.map((i) => results[i]!.rows as ScriptRows);
            },
          }),
        );
      } catch (error) {
        preparedHere = await preparedNames(async (text) => (await db.query<Record<string, unknown>>(text)).rows);
        throw error;
      }
    },
    close: async () => {
      await db.close();
      unlock();
    },
  };
}
