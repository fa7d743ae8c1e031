#!/usr/bin/env node
// `npm run db:drift`: fails when prisma/migrations does not produce the
// schema described by prisma/schema.prisma (someone changed the schema
// without `npm run db:migration -- <name>`, or edited a migration by hand).
// The migrations are replayed on a throw-away shadow database; no other
// database is read or written.
// Exit codes: 0 in sync, 1 drift, 2 the check itself could not run.
import { assertServerReachable, createTempDatabase, dropOnExit, runPrisma } from "./prisma-schema-engine/tools.mjs";

const started = Date.now();
let dropAll = async () => {};
let exitCode = 2;
try {
  await assertServerReachable();
  const shadow = await createTempDatabase("settle_drift_shadow");
  dropAll = dropOnExit([shadow]);
  const result = await runPrisma(
    ["migrate", "diff", "--from-migrations", "prisma/migrations", "--to-schema", "prisma/schema.prisma", "--exit-code"],
    { env: { SHADOW_DATABASE_URL: shadow.url } },
  );
  // The CLI prints "Loaded Prisma config from …" on stdout too.
  const summary = result.stdout
    .split("\n")
    .filter((line) => !line.startsWith("Loaded Prisma config"))
    .join("\n")
    .trim();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.code === 0) {
    console.log(`db:drift: prisma/migrations matches prisma/schema.prisma (${seconds}s).`);
    exitCode = 0;
  } else if (result.code === 2) {
    console.error(
      [
        "db:drift: prisma/schema.prisma and prisma/migrations DISAGREE.",
        "Applying every migration gives a database that differs from schema.prisma by:",
        "",
        summary.replace(/^/gm, "  "),
        "",
        "Fix: create a migration for the schema change with `npm run db:migration -- <name>`",
        "(and never edit a migration that has already been committed).",
      ].join("\n"),
    );
    exitCode = 1;
  } else {
    console.error(`db:drift: the check could not run (prisma exited with ${result.code}).`);
    console.error([summary, result.stderr.trim()].filter(Boolean).join("\n"));
  }
} catch (error) {
  console.error(`db:drift: the check could not run: ${error.message}`);
} finally {
  await dropAll();
}
process.exit(exitCode);
