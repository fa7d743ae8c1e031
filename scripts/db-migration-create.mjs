#!/usr/bin/env node
// `npm run db:migration -- <name>`: writes prisma/migrations/<timestamp>_<name>
// with the SQL that takes the existing migrations to prisma/schema.prisma.
// Runs `prisma migrate dev --create-only` against throw-away main and shadow
// databases, so no developer database is needed, read or changed.
import fs from "node:fs";
import path from "node:path";
import { assertServerReachable, createTempDatabase, dropOnExit, runPrisma } from "./prisma-schema-engine/tools.mjs";

const name = process.argv[2];
if (!name || name.startsWith("-") || !/^[A-Za-z0-9_]+$/.test(name)) {
  console.error("Usage: npm run db:migration -- <name>   (letters, digits and _ only, e.g. add_runtime_labels)");
  process.exit(2);
}

const migrationsDir = path.resolve("prisma/migrations");
const listMigrations = () =>
  fs.existsSync(migrationsDir)
    ? fs
        .readdirSync(migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
    : [];

const databases = [];
let dropAll = async () => {};
let exitCode = 1;
try {
  await assertServerReachable();
  const main = await createTempDatabase("settle_migration_main");
  databases.push(main);
  const shadow = await createTempDatabase("settle_migration_shadow");
  databases.push(shadow);
  dropAll = dropOnExit(databases);
  const env = { DATABASE_URL: main.url, SHADOW_DATABASE_URL: shadow.url };

  const deploy = await runPrisma(["migrate", "deploy"], { env });
  if (deploy.code !== 0) {
    throw new Error(`applying the existing migrations failed:\n${deploy.stdout}${deploy.stderr}`);
  }

  const before = new Set(listMigrations());
  // Inherited stdio: migrate dev may need to ask about destructive changes.
  const dev = await runPrisma(["migrate", "dev", "--create-only", "--name", name], { env, inherit: true });
  if (dev.code !== 0) throw new Error(`prisma migrate dev exited with ${dev.code}`);

  const created = listMigrations().filter((dir) => !before.has(dir));
  if (created.length !== 1) throw new Error("prisma migrate dev did not create a migration folder");
  const file = path.join("prisma/migrations", created[0], "migration.sql");
  const sql = fs.readFileSync(file, "utf8");
  console.log(`\ndb:migration: wrote ${file}`);
  if (/^-- This is an empty migration\.\s*$/.test(sql)) {
    console.log("db:migration: schema.prisma has no changes, so the migration is empty (fill it in or delete it).");
  }
  exitCode = 0;
} catch (error) {
  console.error(`db:migration: ${error.message}`);
} finally {
  await dropAll();
}
process.exit(exitCode);
