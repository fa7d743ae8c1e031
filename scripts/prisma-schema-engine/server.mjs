// The schema engine's JSON-RPC 2.0 protocol as the Prisma CLI speaks it:
// newline-delimited requests on stdin, answers on stdout, JSON tracing
// records on stderr.
import readline from "node:readline";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { createPgFactory, parseDatabaseUrl, quoteIdent, withAdminClient } from "./adapters.mjs";
import { createEngine, takePanicMessage } from "./wasm-engine.mjs";

// Methods whose name and parameters are the same on the WASM engine.
const PASS_THROUGH = new Set([
  "applyMigrations",
  "createMigration",
  "devDiagnostic",
  "diagnoseMigrationHistory",
  "ensureConnectionValidity",
  "evaluateDataLoss",
  "introspect",
  "introspectSql",
  "markMigrationApplied",
  "markMigrationRolledBack",
  "reset",
  "schemaPush",
]);

export function logRecord(level, message, extra = {}) {
  return JSON.stringify({ level, fields: { message, ...extra }, target: "schema_engine_bridge" });
}

class RpcError extends Error {
  constructor(message, { errorCode, meta, isPanic = false } = {}) {
    super(message);
    this.errorCode = errorCode;
    this.meta = meta;
    this.isPanic = isPanic;
  }
}

/**
 * @param {{datamodels: [string, string][] | undefined, datasource: {url?: string, shadowDatabaseUrl?: string}}} options
 */
export async function serve({ datamodels, datasource }) {
  // Anything printed to stdout that is not a JSON-RPC message would corrupt
  // the channel; stray console output from dependencies goes to stderr.
  console.log = console.info = console.debug = console.error;
  const write = (stream, line) => {
    try {
      stream.write(line + "\n");
    } catch {
      // The CLI may already be gone (it kills the engine right after stop()).
    }
  };
  const send = (message) => write(process.stdout, JSON.stringify({ jsonrpc: "2.0", ...message }));
  const log = (line) => write(process.stderr, String(line).trimEnd());

  const cleanups = new Set();
  const engines = new Map();
  let nextOutgoingId = 1;
  const pendingOutgoing = new Map();

  // One engine per kind of main connection: the WASM engine connects and
  // probes the main database as soon as it is created.
  const engineFor = (mainFromStub) => {
    if (!engines.has(mainFromStub)) {
      const factory = bindMigrationAwareSqlAdapterFactory(createPgFactory(datasource, cleanups, { mainFromStub }));
      engines.set(
        mainFromStub,
        createEngine(datamodels, log, factory).then((engine) => ({ engine, factory })),
      );
    }
    return engines.get(mainFromStub);
  };

  // evaluateDataLoss and createMigration replay the migrations on a shadow
  // database, but the WASM engine only reaches the adapter's shadow factory
  // from diagnose/devDiagnostic/diff; otherwise it fails with "PostgreSQL
  // shadow DB must be provided through an external factory". Those commands
  // share a per-engine cache keyed by the migration directories, so a
  // diagnosis over the same (fully applied) history fills it beforehand.
  async function warmMigrationSchemaCache(params) {
    try {
      const { engine } = await engineFor(false);
      await engine.diagnoseMigrationHistory({
        migrationsList: params.migrationsList,
        optInToShadowDatabase: true,
        filters: params.filters,
      });
    } catch {
      // The command itself will report whatever is wrong.
    }
  }

  // The native engine does not return diff output: it asks the CLI to print it.
  const printThroughCli = (content) =>
    new Promise((resolve) => {
      const id = nextOutgoingId++;
      pendingOutgoing.set(id, resolve);
      send({ id, method: "print", params: { content } });
    });

  const datasourceUrl = (param) => {
    const url = param?.tag === "ConnectionString" || param?.tag === "url" ? param.url : datasource.url;
    if (!url) throw new RpcError("The datasource has no url; set DATABASE_URL.");
    return url;
  };

  async function call(engineRef, fn) {
    let factory;
    try {
      // Creating the engine already connects, so it can fail like any command.
      const created = await engineRef;
      factory = created.factory;
      return await fn(created.engine);
    } catch (error) {
      throw toRpcError(error, factory);
    }
  }

  async function handle(method, params) {
    if (NEEDS_MIGRATIONS_SCHEMA.has(method)) await warmMigrationSchemaCache(params);
    if (PASS_THROUGH.has(method)) return call(engineFor(false), (e) => e[method](params));
    switch (method) {
      case "diff": {
        const targets = [params.from, params.to];
        const needsMain = targets.some((t) => t.tag === "url" || t.tag === "schemaDatasource");
        const { exitCode, stdout } = await call(engineFor(!needsMain), (e) => e.diff(params));
        if (stdout) await printThroughCli(stdout);
        return { exitCode };
      }
      case "getDatabaseVersion":
        return call(engineFor(false), (e) => e.version(params ?? undefined));
      case "createDatabase": {
        const target = parseDatabaseUrl(datasourceUrl(params?.datasource));
        await withAdminClient(target, (c) => c.query(`CREATE DATABASE ${quoteIdent(target.database)}`));
        return { databaseName: target.database };
      }
      case "dbExecute": {
        // As the native engine does: the whole script as one command.
        const target = parseDatabaseUrl(datasourceUrl(params.datasourceType));
        const client = new pg.Client({ connectionString: target.connectionString });
        try {
          await client.connect();
          await client.query(params.script);
        } finally {
          await client.end().catch(() => {});
        }
        return null;
      }
      case "debugPanic":
        return call(engineFor(true), (e) => e.debugPanic());
      default:
        throw new RpcError(`The schema-engine bridge does not implement \`${method}\`.`);
    }
  }

  // Closes pools and drops throw-away shadow databases; stdin's end, SIGTERM
  // and a panic may all ask for it.
  let shuttingDown;
  const shutdown = (code) =>
    (shuttingDown ??= (async () => {
      for (const cleanup of [...cleanups].reverse()) {
        if (!cleanups.has(cleanup)) continue;
        cleanups.delete(cleanup);
        try {
          await cleanup();
        } catch (error) {
          log(logRecord("WARN", `cleanup failed: ${error.message}`));
        }
      }
      process.exit(code);
    })());

  const sendError = (id, e) =>
    send({
      id,
      error: {
        code: 4466,
        // For panics the CLI shows error.message (or data.error.message).
        message: e.isPanic ? e.message : "An error happened. Check the data field for details.",
        data: { is_panic: e.isPanic, message: e.message, meta: e.meta ?? null, error_code: e.errorCode ?? null },
      },
    });

  let queue = Promise.resolve();
  let inFlight;
  const onRequest = (request) => {
    queue = queue.then(async () => {
      inFlight = request.id;
      try {
        const result = await handle(request.method, request.params);
        send({ id: request.id, result: result ?? null });
      } catch (error) {
        const e = error instanceof RpcError ? error : new RpcError(error?.message ?? String(error));
        if (!(error instanceof RpcError) && error?.code) e.errorCode = mapPgCode(error);
        sendError(request.id, e);
        // A panicked WASM instance cannot be used again; exit like the native engine.
        if (e.isPanic) {
          log(logRecord("ERROR", e.message));
          await shutdown(101);
        }
      } finally {
        inFlight = undefined;
      }
    });
  };

  // A panic can also surface as an exception thrown from a wasm callback,
  // outside any promise; answer the pending request instead of dying silently.
  process.on("uncaughtException", (error) => {
    const message = takePanicMessage() ?? error?.stack ?? String(error);
    if (inFlight !== undefined) sendError(inFlight, new RpcError(message, { isPanic: true }));
    log(logRecord("ERROR", message));
    shutdown(101);
  });

  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (!line.trim()) return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      log(logRecord("WARN", `ignoring a line that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    if (message.method !== undefined) onRequest(message);
    else if (pendingOutgoing.has(message.id)) {
      pendingOutgoing.get(message.id)();
      pendingOutgoing.delete(message.id);
    }
  });
  // The CLI ends stdin and then sends SIGTERM at once: both mean "finish up".
  lines.on("close", () => queue.then(() => shutdown(0)));
  process.on("SIGTERM", () => queue.then(() => shutdown(0)));
  process.on("SIGINT", () => shutdown(130));
}

const NEEDS_MIGRATIONS_SCHEMA = new Set(["evaluateDataLoss", "createMigration"]);

function mapPgCode(error) {
  if (error.code === "ECONNREFUSED" || error.code === "ENOTFOUND") return "P1001";
  if (error.code === "3D000") return "P1003";
  if (error.code === "28P01" || error.code === "28000") return "P1000";
  if (error.code === "42P04") return "P1009";
  return undefined;
}

// The WASM engine rejects with user-facing errors ({code: "P3005", message,
// meta}), connector errors, or a RuntimeError when Rust panics.
function toRpcError(error, factory) {
  if (error instanceof WebAssembly.RuntimeError) {
    return new RpcError(takePanicMessage() ?? error.message, { isPanic: true });
  }
  const full = error?.message ?? String(error);
  // Connector errors carry a Rust span trace that the native engine omits.
  let message = full.split(/\n\s+0: /)[0];
  // Errors thrown in JS inside an adapter reach Rust only as an id.
  const generic = /External error id#(\d+)/.exec(message);
  if (generic) {
    const original = factory?.errorRegistry.consumeError(Number(generic[1]))?.error;
    if (original) message = original.message ?? String(original);
  }
  let errorCode = typeof error?.code === "string" ? error.code : undefined;
  // The native engine reports a failed migration as P3018; the WASM engine
  // only leaves the migration's name in the span trace.
  const failedMigration = /apply_migration::apply_script\s+with migration_name="([^"]+)"/.exec(full);
  if (!errorCode && failedMigration) {
    errorCode = "P3018";
    message =
      "A migration failed to apply. New migrations cannot be applied before the error is recovered from. " +
      "Read more about how to resolve migration issues in a production database: https://pris.ly/d/migrate-resolve\n\n" +
      `Migration name: ${failedMigration[1]}\n\nDatabase error:\n${message.replace(/^external connector error\n/, "")}`;
  }
  return new RpcError(message, { errorCode, meta: error?.meta });
}
