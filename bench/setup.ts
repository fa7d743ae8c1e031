import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import pg from "pg";
import { closeDb, getDb } from "@/lib/db/client";
import { createPostgresDriver } from "@/lib/db/driver";
import { applyMigrations } from "@/lib/db/migrate";
import { createPersonalToken } from "@/lib/identity/personal-tokens";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { createUser } from "@/lib/identity/users";
import { setEnv } from "@/lib/env";

// Everything the benchmark stands up and tears down: the build, its own
// database, a runtime key and a `next start` server.

/**
 * Where a bench writes its figures: bench/results, or SETTLE_BENCH_RESULTS (npm test's tiny runs write
 * to a temporary folder, so the committed figures are only ever full runs').
 */
export function resultsDir(): string {
  const dir = process.env.SETTLE_BENCH_RESULTS || path.join(ROOT, "bench", "results");
  mkdirSync(dir, { recursive: true });
  return dir;
}

export const ROOT = path.resolve(import.meta.dirname, "..");
const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const SOURCES = [
  "app",
  "lib",
  "components",
  "instrumentation.ts",
  "proxy.ts",
  "next.config.ts",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "postcss.config.mjs",
];

function newestMtime(entry: string): number {
  let stat;
  try {
    stat = statSync(entry);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const name of readdirSync(entry)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    newest = Math.max(newest, newestMtime(path.join(entry, name)));
  }
  return newest;
}

/** Builds into `distDir` when it is missing or older than any source file. */
export function ensureBuild(force: "auto" | "skip", distDir = ".next"): "built" | "up to date" | "skipped" {
  if (force === "skip") return "skipped";
  let built = 0;
  try {
    built = statSync(path.join(ROOT, distDir, "BUILD_ID")).mtimeMs;
  } catch {
    built = 0;
  }
  const sources = Math.max(...SOURCES.map((s) => newestMtime(path.join(ROOT, s))));
  if (built > sources) return "up to date";
  console.log(`• next build into ${distDir} (sources are newer than the build) …`);
  // next build adds its build folder's type paths to tsconfig.json: a bench leaves the tracked tree as it found it.
  const tsconfig = path.join(ROOT, "tsconfig.json");
  const before = readFileSync(tsconfig, "utf8");
  try {
    const result = spawnSync(path.join(ROOT, "node_modules", ".bin", "next"), ["build"], {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
      // next.config.ts reads the build folder from SETTLE_NEXT_DIST_DIR.
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", SETTLE_NEXT_DIST_DIR: distDir },
    });
    if (result.status !== 0) throw new Error(`next build failed (exit ${result.status})`);
  } finally {
    if (readFileSync(tsconfig, "utf8") !== before) writeFileSync(tsconfig, before);
  }
  return "built";
}

export type BenchDatabase = { name: string; url: string; drop: () => Promise<void> };

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `settle_bench_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

export async function migrateDatabase(url: string): Promise<void> {
  const driver = createPostgresDriver(url, 2);
  try {
    await applyMigrations(driver);
  } finally {
    await driver.close();
  }
}

/** Migrates the bench database and creates a runtime key and an operator's token, through lib/db directly. */
export async function prepareDatabase(url: string): Promise<{ key: string; runtimeId: string; operatorToken: string }> {
  await migrateDatabase(url);
  // Creating a person goes through Better Auth, which signs with this (the server never needs it: tokens, not sessions).
  setEnv({ DATABASE_URL: url, NODE_ENV: "production", SETTLE_AUTH_SECRET: randomBytes(24).toString("hex") });
  const db = await getDb();
  try {
    const { key, runtime } = await createRuntimeKey(db, "bench-runtime");
    const found = await db.prisma.runtime.findUniqueOrThrow({ where: { name: runtime } });
    const { user } = await createUser(db, {
      email: "bench-operator@example.com",
      role: "operator",
      password: randomBytes(12).toString("hex"),
    });
    const { token } = await createPersonalToken(db, user.id, "bench");
    return { key, runtimeId: found.id, operatorToken: token };
  } finally {
    await closeDb();
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export type BenchServer = { url: string; pid: number; stop: () => Promise<void> };

export async function startServer(
  databaseUrl: string,
  port: number,
  extraEnv: Record<string, string> = {},
): Promise<BenchServer> {
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server (Node refuses --cpu-prof in NODE_OPTIONS).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, path.join(ROOT, "bin", "settle-server.mjs"), "-p", String(port), "-H", "127.0.0.1"],
    {
      cwd: ROOT,
      // Its own process group, so stopping it also stops any worker it forks.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DATABASE_URL: databaseUrl, NEXT_TELEMETRY_DISABLED: "1", ...extraEnv },
    },
  );
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      return;
    }
    const killer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    }, 5_000);
    await exited;
    clearTimeout(killer);
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited (${child.exitCode}):\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`/api/health did not answer 200 within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, pid: child.pid!, stop };
}

/** Stops the run's server and drops its database once, however the run ends (Ctrl-C too). */
export function releaseOnExit(
  held: () => { server: BenchServer | null; database: BenchDatabase | null },
): () => Promise<void> {
  let cleaning: Promise<void> | null = null;
  const cleanup = () => {
    cleaning ??= (async () => {
      const { server, database } = held();
      await server?.stop().catch((e) => console.error("could not stop the server:", e));
      await database?.drop().catch((e) => console.error(`could not drop ${database?.name}:`, e));
    })();
    return cleaning;
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the server and dropping the bench database …`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  return cleanup;
}

/** The commit a run measured, marked +dirty when tracked files differ from it. */
export function gitHead(): string | null {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return null;
  }
}
