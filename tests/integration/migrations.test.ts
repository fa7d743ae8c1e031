import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPgliteDriver, createPostgresDriver, type SqlDriver } from "@/lib/db/driver";
import { applyMigrations, MigrationError, pendingMigrations, readMigrations } from "@/lib/db/migrate";
import { runPrisma } from "../../scripts/prisma-schema-engine/tools.mjs";
import { createDatabase } from "./harness";

// The project's runner must record migrations exactly as Prisma does, on
// PostgreSQL and on PGlite, so that Prisma's own engine accepts the history.

const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

async function freshPostgres(): Promise<{ driver: SqlDriver; url: string }> {
  const db = await createDatabase();
  const driver = createPostgresDriver(db.url, 2);
  drops.push(async () => {
    await driver.close();
    await db.drop();
  });
  return { driver, url: db.url };
}

describe.each(["postgres", "pglite"] as const)("migration runner on %s", (kind) => {
  const open = async () =>
    kind === "postgres" ? (await freshPostgres()).driver : await createPgliteDriver("memory://");

  it("applies every migration once and records it as Prisma does", async () => {
    const driver = await open();
    const migrations = readMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    const first = await applyMigrations(driver);
    expect(first.applied).toEqual(migrations.map((m) => m.name));
    const second = await applyMigrations(driver);
    expect(second).toEqual({ applied: [], alreadyApplied: migrations.length, checksumMismatches: [] });
    expect(await pendingMigrations(driver)).toEqual([]);

    const rows = await driver.query<Record<string, unknown>>(
      `SELECT * FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    expect(rows).toHaveLength(migrations.length);
    for (const [i, row] of rows.entries()) {
      const m = migrations[i]!;
      expect(row).toMatchObject({ migration_name: m.name, applied_steps_count: 1, logs: null, rolled_back_at: null });
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).not.toBeNull();
      expect(row.checksum).toBe(createHash("sha256").update(m.script).digest("hex"));
    }
    const tables = await driver.query<{ tablename: string }>(
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
    );
    expect(tables.map((t) => t.tablename)).toEqual(
      expect.arrayContaining(["attempts", "invocation_actions", "invocations", "runtime_keys", "runtimes", "tasks"]),
    );
    if (kind === "pglite") await driver.close();
  });

  it("records a failed migration, rolls its script back, and refuses to go on (P3009)", async () => {
    const driver = await open();
    const dir = mkdtempSync(path.join(tmpdir(), "settle-migrations-"));
    drops.push(async () => rmSync(dir, { recursive: true, force: true }));
    cpSync(path.join(process.cwd(), "prisma", "migrations"), dir, { recursive: true });
    mkdirSync(path.join(dir, "29990101000000_broken"));
    writeFileSync(
      path.join(dir, "29990101000000_broken", "migration.sql"),
      `CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n`,
    );
    const migrations = readMigrations(dir);

    await expect(applyMigrations(driver, migrations)).rejects.toMatchObject({ code: "P3018" });
    const [failed] = await driver.query<{ finished_at: string | null; logs: string }>(
      `SELECT finished_at, logs FROM "_prisma_migrations" WHERE migration_name = '29990101000000_broken'`,
    );
    expect(failed?.finished_at).toBeNull();
    expect(failed?.logs).toMatch(/no_such_table/);
    const [half] = await driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'half_done'`,
    );
    expect(half?.n).toBe(0);
    const again = applyMigrations(driver, migrations);
    await expect(again).rejects.toBeInstanceOf(MigrationError);
    await expect(again).rejects.toMatchObject({ code: "P3009" });
    if (kind === "pglite") await driver.close();
  });
});

describe("Prisma's own engine and this runner accept each other's history", () => {
  it("prisma migrate status is up to date after this runner applied the migrations", async () => {
    const { driver, url } = await freshPostgres();
    await applyMigrations(driver);
    const status = await runPrisma(["migrate", "status"], { env: { DATABASE_URL: url } });
    expect(`${status.stdout}${status.stderr}`).toMatch(/Database schema is up to date/);
    expect(status.code).toBe(0);
  });

  it("this runner finds nothing to do after prisma migrate deploy", async () => {
    const { driver, url } = await freshPostgres();
    const deploy = await runPrisma(["migrate", "deploy"], { env: { DATABASE_URL: url } });
    expect(deploy.code).toBe(0);
    expect(await pendingMigrations(driver)).toEqual([]);
    expect((await applyMigrations(driver)).applied).toEqual([]);
  });
});
