// Shared by scripts/db-drift.mjs, scripts/db-migration-create.mjs and the
// bridge test: throw-away databases and Prisma CLI runs through the bridge.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { parseDatabaseUrl, quoteIdent, withAdminClient } from "./adapters.mjs";

const require = createRequire(import.meta.url);

export const BRIDGE = fileURLToPath(new URL("./bridge.mjs", import.meta.url));
export const PRISMA_CLI = require.resolve("prisma/build/index.js");

const DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres";

/**
 * The server that gets the temporary databases: the one DATABASE_URL points
 * at (its database is never touched), else the local development server.
 */
export function serverUrl(env = process.env) {
  return env.SETTLE_DB_ADMIN_URL || env.DATABASE_URL || DEFAULT_SERVER;
}

/** Creates an empty database with a unique name; returns its URL and a drop function. */
export async function createTempDatabase(prefix, env = process.env) {
  const server = parseDatabaseUrl(serverUrl(env));
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await withAdminClient(server, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  let dropped = false;
  return {
    name,
    url: server.withDatabase(name),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdminClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
    },
  };
}

/** Fails fast, with a readable message, when PostgreSQL is not reachable. */
export async function assertServerReachable(env = process.env) {
  const client = new pg.Client({ connectionString: parseDatabaseUrl(serverUrl(env)).withDatabase("postgres") });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`PostgreSQL is not reachable at ${parseDatabaseUrl(serverUrl(env)).location}: ${error.message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Runs the Prisma CLI with the bridge as its schema engine. Output is
 * captured unless `inherit` is set (migrate dev may need to ask questions).
 * @returns {Promise<{code: number, stdout: string, stderr: string}>}
 */
export function runPrisma(args, { cwd = process.cwd(), env = {}, inherit = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PRISMA_CLI, ...args], {
      cwd,
      env: {
        ...process.env,
        CHECKPOINT_DISABLE: "1",
        PRISMA_HIDE_UPDATE_MESSAGE: "1",
        PRISMA_SCHEMA_ENGINE_BINARY: BRIDGE,
        ...env,
      },
      stdio: inherit ? "inherit" : ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk) => (stdout += chunk));
    child.stderr?.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

/** Drops the temporary databases even when the script is interrupted. */
export function dropOnExit(databases) {
  const dropAll = async () => {
    const results = await Promise.allSettled(databases.map((db) => db.drop()));
    results.forEach((result, i) => {
      if (result.status === "rejected") console.error(`could not drop ${databases[i].name}: ${result.reason.message}`);
    });
  };
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => dropAll().finally(() => process.exit(130)));
  }
  return dropAll;
}
