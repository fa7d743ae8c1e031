// Drives the real Prisma CLI through the schema-engine bridge, end to end,
// against the local PostgreSQL (temporary databases only).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BRIDGE = path.join(ROOT, "scripts/prisma-schema-engine/bridge.mjs");
const PRISMA = path.join(ROOT, "node_modules/prisma/build/index.js");
const ADMIN_URL =
  process.env.SETTLE_DB_ADMIN_URL ?? process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl("postgres") });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function run(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const result = spawnSync(process.execPath, args, {
    cwd: options.cwd ?? ROOT,
    encoding: "utf8",
    timeout: 30_000,
    env: {
      ...process.env,
      CHECKPOINT_DISABLE: "1",
      PRISMA_SCHEMA_ENGINE_BINARY: BRIDGE,
      SETTLE_DB_ADMIN_URL: ADMIN_URL,
      ...options.env,
    },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, output: result.stdout + result.stderr };
}

/** A copy of prisma/ and prisma.config.ts that a test may change freely. */
function projectCopy(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "settle-bridge-"));
  fs.cpSync(path.join(ROOT, "prisma"), path.join(dir, "prisma"), { recursive: true });
  fs.copyFileSync(path.join(ROOT, "prisma.config.ts"), path.join(dir, "prisma.config.ts"));
  // prisma.config.ts imports "prisma/config".
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

const tempDirs: string[] = [];
const tempDatabases: string[] = [];

beforeAll(async () => {
  try {
    await admin("SELECT 1");
  } catch (error) {
    throw new Error(`These tests need PostgreSQL at ${new URL(ADMIN_URL).host}: ${(error as Error).message}`);
  }
});

afterAll(async () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  for (const name of tempDatabases) await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
});

describe("prisma schema-engine bridge", () => {
  it("diffs the schema from empty without any database", () => {
    const result = run([PRISMA, "migrate", "diff", "--from-empty", "--to-schema", "prisma/schema.prisma", "--script"], {
      env: { DATABASE_URL: "postgresql://postgres@127.0.0.1:1/unreachable" },
    });
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('CREATE TABLE "runtimes"');
  });

  it("passes the drift check on the committed migrations", () => {
    const result = run(["scripts/db-drift.mjs"]);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain("prisma/migrations matches prisma/schema.prisma");
  });

  it("fails the drift check when schema.prisma has a field the migrations lack", () => {
    const dir = projectCopy();
    tempDirs.push(dir);
    const schemaFile = path.join(dir, "prisma/schema.prisma");
    const schema = fs.readFileSync(schemaFile, "utf8");
    const changed = schema.replace(/(model Runtime \{\n)/, '$1  driftProbe String? @map("drift_probe")\n');
    expect(changed).not.toBe(schema);
    fs.writeFileSync(schemaFile, changed);

    const result = run([path.join(ROOT, "scripts/db-drift.mjs")], { cwd: dir });
    expect(result.code, result.output).toBe(1);
    expect(result.stderr).toContain("DISAGREE");
    expect(result.stderr).toContain("Added column `drift_probe`");
  });

  it("reports the database up to date after migrate deploy", async () => {
    const name = `settle_bridge_test_${randomBytes(5).toString("hex")}`;
    await admin(`CREATE DATABASE "${name}"`);
    tempDatabases.push(name);
    const env = { DATABASE_URL: databaseUrl(name) };

    const before = run([PRISMA, "migrate", "status"], { env });
    expect(before.code, before.output).toBe(1);
    expect(before.stdout).toContain("have not yet been applied");

    const deploy = run([PRISMA, "migrate", "deploy"], { env });
    expect(deploy.code, deploy.output).toBe(0);
    expect(deploy.stdout).toContain("All migrations have been successfully applied.");

    const after = run([PRISMA, "migrate", "status"], { env });
    expect(after.code, after.output).toBe(0);
    expect(after.stdout).toContain("Database schema is up to date!");
  });
});
