import path from "node:path";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { readArchive, readManifest, recordInManifest, removePartial, verifyArchive, writeArchive } from "./archive";
import { saveCheckpoints } from "../chain/checkpoints";
import { manifestCheckpoints, takeCheckpoints } from "./checkpoints";
import { ident } from "./partitions";
import { shelfKeyOf } from "./shelves";

// Rows that leave one by one rather than with a whole partition (the kept shelf, the audit trail): a batch is
// recorded (`writing`), written to the archive, then deleted in one transaction with its record's last step
// (`deleted`). A run that stopped after the file was whole deletes exactly the rows in the file; one that
// stopped before forgets the batch, and its rows, still there, go with the next one.

export const PAGE = 2_000;
/** Rows per archive file of a batch. */
export const BATCH_ROWS = 50_000;

export type KeyColumn = readonly [name: string, type: "uuid" | "text" | "date" | "bigint"];

const withShelf = <K extends readonly KeyColumn[]>(key: K) => [...key, ["shelf", "date"]] as const;

/** The relations rows leave one by one, each with its primary key (a batch is read in its order and deleted by it). */
export const batchRelations = {
  attempts: withShelf(shelfKeyOf("attempts")),
  invocation_transitions: withShelf(shelfKeyOf("invocation_transitions")),
  guard_checks: withShelf(shelfKeyOf("guard_checks")),
  attempts_kept: withShelf(shelfKeyOf("attempts")),
  invocation_transitions_kept: withShelf(shelfKeyOf("invocation_transitions")),
  guard_checks_kept: withShelf(shelfKeyOf("guard_checks")),
  invocation_actions: [
    ["runtime_id", "uuid"],
    ["id", "uuid"],
  ],
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

const keyMatch = (keys: readonly KeyColumn[]) => keys.map(([c]) => `t.${ident(c)} = k.${ident(c)}`).join(" AND ");

/** Deletes the rows with these keys (objects of the relation's key columns). */
async function deleteByKeys(sql: Sql, from: BatchRelation, keyRows: Record<string, unknown>[]) {
  const keys = batchRelations[from];
  await sql.query(
    `DELETE FROM ${ident(from)} AS t USING jsonb_to_recordset($1::jsonb) AS k(${keyRecordset(keys)}) WHERE ${keyMatch(keys)}`,
    [JSON.stringify(keyRows)],
  );
}

/** A key as text, one value per key column: where the next page starts. */
export type Cursor = string[];

/**
 * One page of `from`'s rows that `where` picks (over alias `t`, `params` as $1…), in key order, after `after`:
 * each row as JSON text, and the page's last key. Keyset paging, so every page costs the same however deep it is.
 */
export async function readPage(
  sql: Sql,
  from: string,
  keys: readonly KeyColumn[],
  filter: { where: string; params: unknown[] },
  after: Cursor | null,
  limit: number,
): Promise<{ lines: string[]; last: Cursor | null }> {
  const columns = keys.map(([c]) => `t.${ident(c)}`);
  const n = filter.params.length;
  const past = after
    ? ` AND (${columns.join(", ")}) > (${keys.map(([, type], i) => `$${n + 2 + i}::${type}`).join(", ")})`
    : "";
  const rows = await sql.query<Record<string, string>>(
    `SELECT row_to_json(t)::text AS line, ${columns.map((c, i) => `${c}::text AS k${i}`).join(", ")}
       FROM ${ident(from)} t WHERE (${filter.where})${past}
      ORDER BY ${columns.join(", ")} LIMIT $${n + 1}::int`,
    [...filter.params, limit, ...(after ?? [])],
  );
  const last = rows[rows.length - 1];
  return { lines: rows.map((r) => r.line!), last: last ? keys.map((_, i) => last[`k${i}`]!) : null };
}

/** Every row of a relation (a detached month), a page at a time, in key order. */
export async function* allPages(sql: Sql, from: string, keys: readonly KeyColumn[]): AsyncGenerator<string[]> {
  let after: Cursor | null = null;
  for (;;) {
    const page = await readPage(sql, from, keys, { where: "true", params: [] }, after, PAGE);
    if (page.lines.length > 0) yield page.lines;
    if (page.lines.length < PAGE) return;
    after = page.last;
  }
}

const stamp = (now: Date) =>
  now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");

/** Archives and deletes the rows `source.where` picks, a file per `batchRows`; returns how many went. */
export async function archiveBatch(
  db: Db,
  dir: string,
  now: Date,
  source: BatchSource,
  { page: PAGE_ROWS = PAGE, batchRows: BATCH = BATCH_ROWS } = {},
): Promise<number> {
  const keys = batchRelations[source.from];
  const next = (after: Cursor | null, limit: number) => readPage(db.driver, source.from, keys, source, after, limit);
  let total = 0;
  // The cursor runs on across batches: a batch's rows are gone when the next starts, and rows before the cursor
  // that did not match then need not be read again this run.
  let after: Cursor | null = null;
  for (let n = 1; ; n += 1) {
    const firstPage = await next(after, Math.min(PAGE_ROWS, BATCH));
    if (firstPage.lines.length === 0) return total;
    // A run in the same second as an earlier one (the job, then `settle retention run`) numbers on past its names.
    let name = "";
    while (!name) {
      const [claimed] = await db.driver.query<{ name: string }>(
        `INSERT INTO retention_archives (name, source, phase, started_at) VALUES ($1, $2, 'writing', $3::timestamptz)
         ON CONFLICT (name) DO NOTHING RETURNING name`,
        [`${source.from}_${stamp(now)}_${n}`, source.from, now.toISOString()],
      );
      if (claimed) name = claimed.name;
      else n += 1;
    }
    // The page read to see whether there is anything to do is the file's first page.
    async function* pages() {
      let page = firstPage;
      for (let read = 0; ;) {
        yield page.lines;
        const full = page.lines.length === Math.min(PAGE_ROWS, BATCH - read);
        read += page.lines.length;
        after = page.last;
        if (!full || read >= BATCH) return;
        page = await next(after, Math.min(PAGE_ROWS, BATCH - read));
        if (page.lines.length === 0) return;
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
    if (entry.rows < BATCH) return total;
  }
}

/**
 * Deletes the rows a whole archive file holds and closes its record, in one transaction, with the checkpoints
 * the rows leave in the audit chains (named in the file's manifest entry first).
 */
async function finishBatch(db: Db, dir: string, name: string, from: BatchRelation, file: string): Promise<void> {
  const { header, pages } = await readArchive(path.join(dir, file));
  const keys = batchRelations[from];
  const keyRows: Record<string, unknown>[] = [];
  for await (const page of pages) keyRows.push(...page.map((r) => Object.fromEntries(keys.map(([c]) => [c, r[c]]))));
  const checkpoints = await takeCheckpoints(
    db,
    header.table,
    file,
    `${ident(from)} AS t JOIN jsonb_to_recordset($1::jsonb) AS k(${keyRecordset(keys)}) ON ${keyMatch(keys)}`,
    "true",
    [JSON.stringify(keyRows)],
  );
  let entry = (await readManifest(dir)).files.find((f) => f.file === file)!;
  if (checkpoints.length > 0) {
    entry = { ...entry, checkpoints: manifestCheckpoints(checkpoints) };
    await recordInManifest(dir, entry);
  }
  await db.driver.transaction(async (tx) => {
    for (let i = 0; i < keyRows.length; i += PAGE) await deleteByKeys(tx, from, keyRows.slice(i, i + PAGE));
    await saveCheckpoints(tx, checkpoints, new Date());
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
