import type { Db } from "../db/client";
import type { Sql, SqlDriver } from "../db/driver";
import { recordAdminAction } from "../audit/admin";
import { writeArchive, verifyArchive, readManifest, type ArchiveEntry } from "./archive";
import { ensurePartitions, ident, listShelfPartitions, shelfLiteral } from "./partitions";
import { cutoffsFor, expiredParams, rowMayGoSql, shorterThanDefault, type Cutoffs } from "./rules";
import { loadRetention } from "./settings";
import {
  KEPT_SHELF,
  keptPartition,
  partitionName,
  shelfEnd,
  shelfKeyOf,
  shelfOf,
  shelvedTables,
  type Shelf,
  type ShelvedTable,
} from "./shelves";
import { sweepAudit } from "./audit-sweep";
import { allPages, archiveBatch, finishBatches } from "./batches";
import { saveCheckpoints } from "../chain/checkpoints";
import { manifestCheckpoints, takeCheckpoints } from "./checkpoints";
import { signEvidence } from "../evidence/keys";

// Retiring a month (decision 035), in steps that each leave the database whole, recorded in
// retention_archives so that a run that stopped part-way resumes where it stopped:
//   1. one transaction moves the month's rows that must stay (rules.ts) to the kept shelf and detaches the
//      month's partition (phase `detached`): from here no reader sees its rows and no writer adds any;
//   2. the detached table is written to the archive and its checksum recorded (phase `archived`);
//   3. the table is dropped (phase `dropped`), and the admin audit trail says so (actor `system`); the checkpoints
//      its rows leave in the audit chains (checkpoints.ts, listed in the manifest with the file) are kept with it.
// A table is dropped only after its archive is on disk with the checksum it was recorded with.

export type RetentionRun = {
  partitions_made: string[];
  retired: ArchiveEntry[];
  /** Each step of each month retired: how long it took; `kept` counts the rows that moved to the kept shelf. */
  steps: Array<{ name: string; step: "detach" | "archive" | "drop"; ms: number; kept?: number }>;
  kept_archived: number;
  /** Rows of runtimes whose period is shorter than the default, archived and deleted before their month leaves. */
  early_archived: number;
  audit_archived: number;
  skipped?: "another instance is running retention";
};

const SESSION_LOCK = `hashtext('settle_retention')`;

/** For the crash tests: stop (throw) right after a month reaches this phase, as a killed process would. */
export type RetentionOptions = {
  stopAfter?: "detached" | "archived";
  /** Sweep the audit trail too (the job does it once a day: it reads the old end of the audit tables). */
  audit?: boolean;
};

/** Makes partitions ahead, retires the months out of retention, then sweeps the kept shelf and the audit trail. */
export async function applyRetention(
  db: Db,
  now: Date,
  archiveDir: string,
  options: RetentionOptions = {},
): Promise<RetentionRun> {
  const run: RetentionRun = {
    partitions_made: [],
    retired: [],
    steps: [],
    kept_archived: 0,
    early_archived: 0,
    audit_archived: 0,
  };
  run.partitions_made = await ensurePartitions(db.driver, now);
  // One instance at a time retires: the others find the lock taken and leave it to that one.
  const locked = await db.driver.withSession(async (session) => {
    const [lock] = await session.query<{ got: boolean }>(`SELECT pg_try_advisory_lock(${SESSION_LOCK}) AS got`);
    if (!lock?.got) return false;
    try {
      const settings = await loadRetention(db.driver);
      // Checkpoints are signed: with an unusable key (another auth secret), stop before anything is detached.
      await signEvidence(db, ["settle.retention-run", now.toISOString()]);
      await finishUnfinished(db, archiveDir, run);
      for (const { table, period } of shelvedTables) {
        const cutoffs = cutoffsFor(settings, period, now);
        for (const shelf of await monthsDue(db.driver, table, settings.fallback[period], now)) {
          run.retired.push(await retireMonth(db, archiveDir, table, shelf, cutoffs, now, options, run.steps));
        }
        run.kept_archived += await sweepKept(db, archiveDir, table, cutoffs, now);
        run.early_archived += await sweepShorter(
          db,
          archiveDir,
          table,
          cutoffs,
          shorterThanDefault(settings, period),
          now,
        );
      }
      if (options.audit !== false) run.audit_archived = await sweepAudit(db, archiveDir, settings, now);
      return true;
    } finally {
      await session.query(`SELECT pg_advisory_unlock(${SESSION_LOCK})`);
    }
  });
  if (!locked) run.skipped = "another instance is running retention";
  return run;
}

/**
 * Month partitions that ended at least the default period ago. The default governs the partitions: a runtime with
 * a longer period keeps its rows on the kept shelf, one with a shorter period has its rows swept out of the
 * months early (sweepShorter), so an exception costs row-by-row work in proportion to that runtime's traffic only.
 */
async function monthsDue(sql: Sql, table: ShelvedTable, days: number, now: Date): Promise<Shelf[]> {
  const current = shelfOf(now);
  return (await listShelfPartitions(sql, table))
    .filter((p) => p.shelf < current && shelfEnd(p.shelf).getTime() + days * 86_400_000 <= now.getTime())
    .map((p) => p.shelf);
}

type ArchiveRow = { name: string; source: string; shelf: string | null; phase: string; file: string | null };

/** Step 1: the rows that stay move to the kept shelf, and the month's partition is detached, in one transaction. */
async function detachMonth(
  driver: SqlDriver,
  table: ShelvedTable,
  shelf: Shelf,
  name: string,
  cutoffs: Cutoffs,
  now: Date,
): Promise<number> {
  return driver.transaction(
    async (tx) => {
      const [moved] = await tx.query<{ n: number }>(
        `WITH kept AS (
           UPDATE ${ident(table)} AS a SET shelf = '${KEPT_SHELF}'
            WHERE a.shelf = $1::date AND NOT ${rowMayGoSql(table, "a", 2)}
           RETURNING 1)
         SELECT count(*)::int AS n FROM kept`,
        [shelf, ...expiredParams(cutoffs)],
      );
      await tx.query(`ALTER TABLE ${ident(table)} DETACH PARTITION ${ident(name)}`);
      await tx.query(
        `INSERT INTO retention_archives (name, source, shelf, phase, started_at) VALUES ($1, $2, $3::date, 'detached', $4::timestamptz)
         ON CONFLICT (name) DO UPDATE SET phase = 'detached', started_at = EXCLUDED.started_at, finished_at = NULL`,
        [name, table, shelf, now.toISOString()],
      );
      return moved?.n ?? 0;
    },
    { settings: ["lock_timeout = '10s'"] },
  );
}

type Steps = RetentionRun["steps"];

const since = (started: number) => Math.round(performance.now() - started);

/** Steps 2 and 3 for a detached month: archive it (again, if its file is not whole), then drop it. */
async function archiveAndDrop(
  db: Db,
  dir: string,
  row: ArchiveRow,
  now: Date,
  options: RetentionOptions,
  steps: Steps,
): Promise<ArchiveEntry> {
  const file = `${row.name}.jsonl.gz`;
  let started = performance.now();
  const [table] = await db.driver.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [row.name]);
  const found = table?.found === true;
  const listed = (await readManifest(dir)).files.find((f) => f.file === file);
  let entry = listed && row.phase === "archived" && (await verifyArchive(dir, listed)) === "ok" ? listed : null;
  // What the month's rows leave in the audit chains, worked out from the table until the drop that saves it.
  const checkpoints = found ? await takeCheckpoints(db, row.source, file, `${ident(row.name)} t`) : [];
  if (!entry) {
    if (!found) throw new Error(`${row.name} was detached but neither its table nor a whole archive of it remains`);
    entry = await writeArchive(
      dir,
      file,
      { table: row.source, source: row.name, shelf: row.shelf, archived_at: now.toISOString(), migration: null },
      allPages(db.driver, row.name, shelfKeyOf(row.source)),
      manifestCheckpoints(checkpoints),
    );
    await db.driver.query(
      `UPDATE retention_archives SET phase = 'archived', file = $2, rows = $3::bigint, bytes = $4::bigint, sha256 = $5 WHERE name = $1`,
      [row.name, entry.file, entry.rows, entry.bytes, entry.sha256],
    );
    steps.push({ name: row.name, step: "archive", ms: since(started) });
  }
  if (options.stopAfter === "archived") throw new Error(`retention stopped after archived ${row.name}`);
  const done = entry;
  started = performance.now();
  await db.driver.transaction(async (tx) => {
    await saveCheckpoints(tx, checkpoints, now);
    await tx.query(`DROP TABLE IF EXISTS ${ident(row.name)}`);
    await tx.query(`UPDATE retention_archives SET phase = 'dropped', finished_at = $2::timestamptz WHERE name = $1`, [
      row.name,
      now.toISOString(),
    ]);
    await recordAdminAction(tx, {
      actor: "system",
      action: "partition_archived",
      targetType: "retention",
      targetId: row.name,
      after: { file: done.file, rows: done.rows, sha256: done.sha256 },
    });
  });
  steps.push({ name: row.name, step: "drop", ms: since(started) });
  return done;
}

async function retireMonth(
  db: Db,
  dir: string,
  table: ShelvedTable,
  shelf: Shelf,
  cutoffs: Cutoffs,
  now: Date,
  options: RetentionOptions,
  steps: Steps,
): Promise<ArchiveEntry> {
  shelfLiteral(shelf);
  const name = partitionName(table, shelf);
  const started = performance.now();
  const kept = await detachMonth(db.driver, table, shelf, name, cutoffs, now);
  steps.push({ name, step: "detach", ms: since(started), kept });
  if (options.stopAfter === "detached") throw new Error(`retention stopped after detached ${name}`);
  return archiveAndDrop(db, dir, { name, source: table, shelf, phase: "detached", file: null }, now, options, steps);
}

/** Months a previous run detached but did not finish, and batches it archived but did not delete. */
async function finishUnfinished(db: Db, dir: string, run: RetentionRun): Promise<void> {
  const rows = await db.driver.query<ArchiveRow>(
    `SELECT name, source, shelf::text AS shelf, phase, file FROM retention_archives
      WHERE shelf IS NOT NULL AND phase IN ('detached', 'archived') ORDER BY name`,
  );
  for (const row of rows) run.retired.push(await archiveAndDrop(db, dir, row, new Date(), {}, run.steps));
  await finishBatches(db, dir);
}

/** Rows on the kept shelf whose invocation has since left retention: archived, then deleted. */
async function sweepKept(db: Db, dir: string, table: ShelvedTable, cutoffs: Cutoffs, now: Date): Promise<number> {
  return archiveBatch(db, dir, now, {
    table,
    from: keptPartition(table),
    where: rowMayGoSql(table, "t", 1),
    params: expiredParams(cutoffs),
  });
}

/**
 * Rows of runtimes whose period is shorter than the default that may go, out of the month partitions (and the
 * default one) before their month is due: archived, then deleted. Only months that began before the latest of
 * those runtimes' cutoffs can hold such rows; a record received after its invocation closed waits for its month.
 */
async function sweepShorter(
  db: Db,
  dir: string,
  table: ShelvedTable,
  cutoffs: Cutoffs,
  runtimes: string[],
  now: Date,
): Promise<number> {
  if (runtimes.length === 0) return 0;
  const latest = cutoffs.byRuntime
    .filter((c) => runtimes.includes(c.runtime_id))
    .reduce((a, c) => (c.cutoff > a ? c.cutoff : a), "");
  return archiveBatch(db, dir, now, {
    table,
    from: table,
    where: `t.runtime_id = ANY($4::uuid[]) AND t.shelf <= $5::date AND ${rowMayGoSql(table, "t", 1)}`,
    params: [...expiredParams(cutoffs), runtimes, shelfOf(new Date(latest))],
  });
}
