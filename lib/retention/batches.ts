import path from "node:path";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { readArchive, readManifest, removePartial, verifyArchive, writeArchive } from "./archive";
import { ident } from "./partitions";

// Rows that leave one by one rather than with a whole partition (the kept shelf, the audit trail): a batch is
// recorded (`writing`), written to the archive, then deleted in one transaction with its record's last step
// (`deleted`). A run that stopped after the file was whole deletes exactly the rows in the file; one that
// stopped before forgets the batch, and its rows, still there, go with the next one.

export const PAGE = 2_000;
/** Rows per archive file of a batch. */
export const BATCH_ROWS = 50_000;

export type KeyColumn = readonly [name: string, type: "uuid" | "text" | "date" | "bigint"];

/** The relations rows leave one by one, each with its primary key (a batch is deleted by it). */
export const batchRelations = {
  attempts_kept: [
    ["runtime_id", "uuid"],
    ["event_key", "text"],
    ["shelf", "date"],
  ],
  invocation_actions: [["id", "uuid"]],
  invocation_transitions: [["id", "bigint"]],
  admin_actions: [["id", "uuid"]],
  policy_changes: [["id", "uuid"]],
} as const satisfies Record<string, readonly KeyColumn[]>;
export type BatchRelation = keyof typeof batchRelations;

export type BatchSource = {
  /** The table whose rows these are (what the archive's header names). */
  table: string;
  /** The relation the rows are read and deleted from (a partition, or the table). */
  from: BatchRelation;
  /** SQL over alias `t` that picks the rows that may go, with `params` as $1…. */
  where: string;
  params: unknown[];
};

const keyRecordset = (keys: readonly KeyColumn[]) => keys.map(([c, t]) => `${ident(c)} ${t}`).join(", ");

async function deleteByKeys(sql: Sql, from: BatchRelation, rows: Record<string, unknown>[]) {
  const keys = batchRelations[from];
  const match = keys.map(([c]) => `t.${ident(c)} = k.${ident(c)}`).join(" AND ");
  const keyRows = rows.map((r) => Object.fromEntries(keys.map(([c]) => [c, r[c]])));
  await sql.query(
    `DELETE FROM ${ident(from)} AS t USING jsonb_to_recordset($1::jsonb) AS k(${keyRecordset(keys)}) WHERE ${match}`,
    [JSON.stringify(keyRows)],
  );
}

const stamp = (now: Date) =>
  now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");

/** Archives and deletes the rows `source.where` picks, a file per BATCH_ROWS; returns how many went. */
export async function archiveBatch(db: Db, dir: string, now: Date, source: BatchSource): Promise<number> {
  let total = 0;
  for (let n = 1; ; n += 1) {
    const name = `${source.from}_${stamp(now)}_${n}`;
    const order = batchRelations[source.from].map(([c]) => `t.${ident(c)}`).join(", ");
    const first = source.params.length + 1;
    const select = (offset: number) =>
      db.driver.query<{ line: string }>(
        `SELECT row_to_json(t)::text AS line FROM ${ident(source.from)} t WHERE ${source.where}
          ORDER BY ${order} LIMIT $${first}::int OFFSET $${first + 1}::int`,
        [...source.params, Math.min(PAGE, BATCH_ROWS - offset), offset],
      );
    const firstPage = await select(0);
    if (firstPage.length === 0) return total;
    await db.driver.query(
      `INSERT INTO retention_archives (name, source, phase, started_at) VALUES ($1, $2, 'writing', $3::timestamptz)`,
      [name, source.from, now.toISOString()],
    );
    // The page read to see whether there is anything to do is the file's first page.
    async function* pages() {
      let rows = firstPage;
      for (let offset = 0; rows.length > 0;) {
        yield rows.map((r) => r.line);
        const full = rows.length === Math.min(PAGE, BATCH_ROWS - offset);
        offset += rows.length;
        if (!full || offset >= BATCH_ROWS) return;
        rows = await select(offset);
      }
    }
    const entry = await writeArchive(
      dir,
      `${name}.jsonl.gz`,
      { table: source.table, source: source.from, shelf: null, archived_at: now.toISOString(), migration: null },
      pages(),
    );
    await finishBatch(db, dir, name, source.from, entry.file);
    total += entry.rows;
    if (entry.rows < BATCH_ROWS) return total;
  }
}

/** Deletes the rows a whole archive file holds and closes its record, in one transaction. */
async function finishBatch(db: Db, dir: string, name: string, from: BatchRelation, file: string): Promise<void> {
  const { pages } = await readArchive(path.join(dir, file));
  const entry = (await readManifest(dir)).files.find((f) => f.file === file)!;
  await db.driver.transaction(async (tx) => {
    for await (const page of pages) await deleteByKeys(tx, from, page);
    await tx.query(
      `UPDATE retention_archives SET phase = 'deleted', file = $2, rows = $3::bigint, bytes = $4::bigint, sha256 = $5,
              finished_at = now() WHERE name = $1`,
      [name, file, entry.rows, entry.bytes, entry.sha256],
    );
  });
}

/** Batches a previous run left `writing`: finished from a whole file, else forgotten (their rows are still there). */
export async function finishBatches(db: Db, dir: string): Promise<void> {
  const rows = await db.driver.query<{ name: string; source: string }>(
    `SELECT name, source FROM retention_archives WHERE shelf IS NULL AND phase = 'writing' ORDER BY name`,
  );
  const manifest = await readManifest(dir);
  for (const row of rows) {
    const file = `${row.name}.jsonl.gz`;
    const entry = manifest.files.find((f) => f.file === file);
    if (entry && row.source in batchRelations && (await verifyArchive(dir, entry)) === "ok") {
      await finishBatch(db, dir, row.name, row.source as BatchRelation, file);
    } else {
      await removePartial(dir, file);
      await db.driver.query(`DELETE FROM retention_archives WHERE name = $1`, [row.name]);
    }
  }
}
