// Driver adapters handed to the WASM schema engine. @prisma/adapter-pg is
// built for Prisma Client, not for the schema engine; the wrappers here fix
// the three ways it breaks migrations (pitfalls 1-3 in
// shared/notes/prisma-offline.md).
import { randomUUID } from "node:crypto";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { ColumnTypeEnum } from "@prisma/driver-adapter-utils";
import { stubAdapter } from "./stub-adapter.mjs";

const TEXT = 25;
const TEXT_ARRAY = 1009;
const CHAR = 18; // the one-byte catalog type "char", not char(n)

// Catalog types that adapter-pg refuses (UnsupportedNativeDataType) but that
// the schema describer selects from pg_catalog. Their text form is what the
// native engine reads too.
const CATALOG_SCALARS = new Set([
  CHAR, // pg_constraint.contype, pg_class.relkind, ...
  22, // int2vector
  24, // regproc
  27, // tid
  28, // xid
  29, // cid
  30, // oidvector
  194, // pg_node_tree
  705, // unknown (untyped literals)
  1033, // aclitem
  2205, // regclass
  2206, // regtype
  3220, // pg_lsn
  4089, // regnamespace
  4096, // regrole
  5069, // xid8
]);
const CATALOG_ARRAYS = new Set([1003 /* name[] */, 1006, 1008, 1010, 1011, 1012, 1013, 1034, 2210, 2211]);

// adapter-pg returns pg's rows array unchanged, so a tag on it survives to
// the adapter's result; it names the columns that were "char".
const CHAR_COLUMNS = Symbol("charColumns");

const identity = (value) => value;
const parseTextArray = pg.types.getTypeParser(TEXT_ARRAY, "text");

// A pg.Client whose array-mode results (the only mode adapter-pg uses) report
// catalog types as text / text[], so adapter-pg maps them instead of throwing.
class CatalogTolerantClient extends pg.Client {
  query(config, values, callback) {
    if (typeof values === "function") {
      callback = values;
      values = undefined;
    }
    if (!config || typeof config !== "object" || config.rowMode !== "array" || typeof config.submit === "function") {
      return super.query(config, values, callback);
    }
    const inner = config.types?.getTypeParser ?? pg.types.getTypeParser;
    const patched = {
      ...config,
      types: {
        getTypeParser: (oid, format) => {
          if (CATALOG_ARRAYS.has(oid)) return parseTextArray;
          if (CATALOG_SCALARS.has(oid)) return identity;
          return inner(oid, format);
        },
      },
    };
    const relabel = (result) => {
      const charColumns = [];
      (result?.fields ?? []).forEach((field, index) => {
        if (field.dataTypeID === CHAR) charColumns.push(index);
        if (CATALOG_ARRAYS.has(field.dataTypeID)) field.dataTypeID = TEXT_ARRAY;
        else if (CATALOG_SCALARS.has(field.dataTypeID)) field.dataTypeID = TEXT;
      });
      if (charColumns.length > 0 && Array.isArray(result.rows)) {
        Object.defineProperty(result.rows, CHAR_COLUMNS, { value: charColumns });
      }
      return result;
    };
    if (callback) return super.query(patched, values, (err, result) => callback(err, err ? result : relabel(result)));
    return super.query(patched, values).then(relabel);
  }
}

// The describer reads "char" columns as Character, not Text (it panics on
// Text: "Getting constraint_type ... as char failed").
function withCharColumns(queryable) {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const index of result.rows[CHAR_COLUMNS] ?? []) result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
  return queryable;
}

/**
 * Splits Prisma's `?schema=` off a connection string: pg does not know it,
 * so it becomes the adapter's schema and the session's search_path (which is
 * what unqualified migration SQL relies on, as with the native engine).
 */
export function parseDatabaseUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error("The datasource URL is not a valid URL.");
  }
  if (!/^postgres(ql)?:$/.test(parsed.protocol)) {
    throw new Error(`The schema-engine bridge supports postgresql:// URLs only, got ${parsed.protocol}//.`);
  }
  const schema = parsed.searchParams.get("schema") ?? undefined;
  parsed.searchParams.delete("schema");
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || parsed.username || "postgres";
  return {
    connectionString: parsed.toString(),
    schema,
    database,
    location: `${parsed.hostname || "localhost"}:${parsed.port || "5432"}`,
    withDatabase(name) {
      const copy = new URL(parsed.toString());
      copy.pathname = `/${encodeURIComponent(name)}`;
      return copy.toString();
    },
  };
}

export function quoteIdent(name) {
  return `"${String(name).replaceAll('"', '""')}"`;
}

function poolConfig(target) {
  return {
    connectionString: target.connectionString,
    Client: CatalogTolerantClient,
    // The engine's advisory lock lives on whichever pooled session took it;
    // closing idle sessions would release it in the middle of a command.
    idleTimeoutMillis: 0,
    ...(target.schema ? { options: `-c search_path=${quoteIdent(target.schema)}` } : {}),
  };
}

// Runs one SQL command on a short-lived connection to the server's
// maintenance database (CREATE/DROP DATABASE cannot run inside the target).
export async function withAdminClient(target, fn) {
  let lastError;
  for (const db of ["postgres", "template1"]) {
    const client = new pg.Client({ connectionString: target.withDatabase(db) });
    try {
      await client.connect();
    } catch (error) {
      lastError = error;
      await client.end().catch(() => {});
      if (error?.code === "3D000") continue;
      throw error;
    }
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => {});
    }
  }
  throw lastError;
}

function adaptPgAdapter(adapter) {
  withCharColumns(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (...args) => withCharColumns(await startTransaction(...args));
  // adapter-pg splits scripts on ";", which breaks $$-quoted bodies and leaves
  // a failing migration half-applied. One simple-protocol query runs the
  // whole script in one implicit transaction, like the native engine.
  adapter.executeScript = async (script) => {
    try {
      await adapter.underlyingDriver().query(script);
    } catch (error) {
      adapter.onError(error);
    }
  };
  return adapter;
}

/**
 * The migration-aware adapter factory for a real PostgreSQL server.
 * adapter-pg's own connectToShadowDb uses the main database when a
 * connection string is set and drops its temporary database before closing
 * the pool; this one honours shadowDatabaseUrl, and otherwise creates a
 * throw-away shadow database that is dropped after its pool is closed.
 *
 * @param {{url?: string, shadowDatabaseUrl?: string, mainFromStub?: boolean}} datasource
 * @param {Set<() => Promise<void>>} cleanups run by the bridge before exit
 */
export function createPgFactory(datasource, cleanups, { mainFromStub = false } = {}) {
  const main = datasource.url ? parseDatabaseUrl(datasource.url) : undefined;
  const shadow = datasource.shadowDatabaseUrl ? parseDatabaseUrl(datasource.shadowDatabaseUrl) : undefined;

  const open = async (target) => {
    const factory = new PrismaPg(poolConfig(target), target.schema ? { schema: target.schema } : undefined);
    const adapter = adaptPgAdapter(await factory.connect());
    const release = adapter.dispose.bind(adapter);
    let released = false;
    const dispose = async () => {
      if (released) return;
      released = true;
      cleanups.delete(dispose);
      await release();
    };
    adapter.dispose = dispose;
    cleanups.add(dispose);
    return adapter;
  };

  return {
    provider: "postgres",
    adapterName: "@prisma/adapter-pg",
    async connect() {
      if (mainFromStub) return stubAdapter();
      if (!main) throw new Error("The datasource has no url; set DATABASE_URL.");
      return open(main);
    },
    async connectToShadowDb() {
      if (shadow) {
        if (main && shadow.connectionString === main.connectionString) {
          throw new Error(
            "The shadow database you configured appears to be the same as the main database. Please specify another shadow database.",
          );
        }
        const adapter = await open(shadow);
        await resetSchemas(adapter.underlyingDriver(), shadow.schema ?? "public");
        return adapter;
      }
      if (!main)
        throw new Error("A shadow database is needed: set SHADOW_DATABASE_URL (datasource.shadowDatabaseUrl).");
      const name = `prisma_migrate_shadow_db_${randomUUID()}`;
      await withAdminClient(main, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
      const dropDatabase = () =>
        withAdminClient(main, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
      cleanups.add(dropDatabase);
      const adapter = await open({ ...main, connectionString: main.withDatabase(name) });
      const closePool = adapter.dispose;
      // Pool first, database second: the reverse order is adapter-pg's bug.
      adapter.dispose = async () => {
        await closePool();
        if (cleanups.delete(dropDatabase)) await dropDatabase();
      };
      return adapter;
    },
  };
}

// Empties a configured shadow database the way the native engine resets it.
async function resetSchemas(pool, defaultSchema) {
  const { rows } = await pool.query(
    `SELECT nspname FROM pg_namespace
      WHERE nspname NOT IN ('information_schema', 'pg_toast')
        AND nspname NOT LIKE 'pg\\_%'`,
  );
  const sql = rows.map((r) => `DROP SCHEMA ${quoteIdent(r.nspname)} CASCADE;`);
  sql.push(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(defaultSchema)};`);
  await pool.query(sql.join("\n"));
}
