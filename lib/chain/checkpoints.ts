import { createHash, createPublicKey, verify } from "node:crypto";
import type { Sql } from "../db/driver";
import { ADMIN_CHAIN, CHAINED, contentSql, type ChainKind } from "./entries";

// What an archive took out of a chain. When retention archives rows of a chained table and then drops or deletes
// them (a month's partition, a batch of the kept shelf or of the audit trail), it leaves one checkpoint per chain
// the rows were in: how many entries left, the runs of consecutive places they held, and for each run the link
// hash its first entry followed and the link hash of its last. The walk (verify.ts) accepts a missing place only
// inside a run, and checks the entries on both sides against the run's hashes, so a chain stays checkable across
// what retention removed. A checkpoint also says the first place among its rows whose content or link did not
// hold when they were archived (an edit made before retention took the row is not hidden by it). Its canonical
// text (`checkpointText`) is hashed (`sha256`, also in the archive's manifest entry) and signed with Settle's
// evidence key; the walk refuses a checkpoint whose hash or signature does not hold. A restore brings the rows
// back in their places and the walk reads them again.

/** A run of consecutive places that left in one archive. Hashes are hex. */
export type Run = { from: number; to: number; firstPrev: string; lastHash: string };

export type CheckpointBody = {
  /** The archive file (its name in the manifest). */
  archive: string;
  chain: string;
  entries: number;
  runs: Run[];
  lastHash: string;
  firstUnsound: number | null;
};

export type CheckpointSignature = { algorithm: string; key_id: string; public_key: string; value: string };
export type Checkpoint = CheckpointBody & { sha256: string; signature: CheckpointSignature | null };

export const CHECKPOINT_FORMAT = "settle.audit-checkpoint/1";

/**
 * The value a checkpoint's hash and signature are made over: an array (so its JSON has one spelling, the canonical
 * JSON lib/evidence signs), `[format, archive, chain, entries, runs as [from, to, firstPrev, lastHash], lastHash,
 * firstUnsound]`.
 */
export function checkpointValue(c: CheckpointBody): unknown[] {
  const runs = c.runs.map((r) => [r.from, r.to, r.firstPrev, r.lastHash]);
  return [CHECKPOINT_FORMAT, c.archive, c.chain, c.entries, runs, c.lastHash, c.firstUnsound];
}

export const checkpointText = (c: CheckpointBody) => JSON.stringify(checkpointValue(c));
export const checkpointSha256 = (c: CheckpointBody) => createHash("sha256").update(checkpointText(c)).digest("hex");

/** The kind of entry a chained table's rows are; null for a table no chain covers. */
export function chainKindOf(table: string): ChainKind | null {
  const found = Object.entries(CHAINED).find(([, t]) => t.table === table);
  return found ? (found[0] as ChainKind) : null;
}

/**
 * The checkpoints of the chained rows of `relation` (SQL, alias `t`) that `where` picks (`params` as $1…), one per
 * chain, worked out in one statement: islands of consecutive places, the hashes at their edges, and the first
 * place whose stored content hash differs from its row's or whose link does not follow the place before it.
 */
export async function collectCheckpoints(
  sql: Sql,
  kind: ChainKind,
  archive: string,
  relation: string,
  where = "true",
  params: unknown[] = [],
): Promise<CheckpointBody[]> {
  const chain = kind === "admin" ? `'${ADMIN_CHAIN}'::text` : `t.runtime_id::text`;
  const rows = await sql.query<{
    chain: string;
    entries: string;
    runs: Array<[string, string, string, string]>;
    unsound: string | null;
  }>(
    `WITH e AS (
       SELECT ${chain} AS chain, t.chain_seq AS seq, t.chain_prev AS prev, sha256(t.chain_prev || t.chain_content) AS hash,
              t.chain_content IS DISTINCT FROM ${contentSql(kind, (column) => `t.${column}`)} AS changed
         FROM ${relation} WHERE t.chain_seq IS NOT NULL AND (${where})),
     l AS (
       SELECT e.*, lag(seq) OVER w AS before_seq, lag(hash) OVER w AS before_hash,
              seq - row_number() OVER w AS island
         FROM e WINDOW w AS (PARTITION BY chain ORDER BY seq)),
     r AS (
       SELECT chain, min(seq) AS first, max(seq) AS last, count(*) AS n,
              (array_agg(prev ORDER BY seq))[1] AS first_prev, (array_agg(hash ORDER BY seq DESC))[1] AS last_hash,
              min(seq) FILTER (WHERE changed OR before_seq = seq OR (before_seq = seq - 1 AND prev IS DISTINCT FROM before_hash)) AS unsound
         FROM l GROUP BY chain, island)
     SELECT chain, sum(n)::text AS entries, min(unsound)::text AS unsound,
            jsonb_agg(jsonb_build_array(first::text, last::text, encode(first_prev, 'hex'), encode(last_hash, 'hex')) ORDER BY first) AS runs
       FROM r GROUP BY chain ORDER BY chain`,
    params,
  );
  return rows.map((row) => {
    const runs = row.runs.map(([from, to, firstPrev, lastHash]) => ({
      from: Number(from),
      to: Number(to),
      firstPrev,
      lastHash,
    }));
    return {
      archive,
      chain: row.chain,
      entries: Number(row.entries),
      runs,
      lastHash: runs.at(-1)!.lastHash,
      firstUnsound: row.unsound === null ? null : Number(row.unsound),
    };
  });
}

/** Keeps checkpoints (an archive written again replaces its own). */
export async function saveCheckpoints(sql: Pick<Sql, "query">, checkpoints: Checkpoint[], at: Date): Promise<void> {
  for (const c of checkpoints) {
    await sql.query(
      `INSERT INTO audit_checkpoints (archive, chain, entries, runs, last_hash, sha256, at, first_unsound, signature)
       VALUES ($1, $2, $3::bigint, $4::jsonb, $5, $6, $7::timestamptz, $8::bigint, $9::jsonb)
       ON CONFLICT (archive, chain) DO UPDATE SET entries = EXCLUDED.entries, runs = EXCLUDED.runs,
         last_hash = EXCLUDED.last_hash, sha256 = EXCLUDED.sha256, at = EXCLUDED.at,
         first_unsound = EXCLUDED.first_unsound, signature = EXCLUDED.signature`,
      [
        c.archive,
        c.chain,
        c.entries,
        JSON.stringify(c.runs.map((r) => [r.from, r.to, r.firstPrev, r.lastHash])),
        c.lastHash,
        c.sha256,
        at.toISOString(),
        c.firstUnsound,
        c.signature === null ? null : JSON.stringify(c.signature),
      ],
    );
  }
}

/** Why a checkpoint cannot be trusted, at the first place it covers; null when it holds. */
export type UnsoundCheckpoint = { seq: number; reason: string };

type CheckpointRow = {
  archive: string;
  chain: string;
  entries: string;
  runs: Array<[number, number, string, string]>;
  last_hash: string;
  sha256: string;
  first_unsound: string | null;
  signature: CheckpointSignature | null;
  key: string | null;
};

function judge(row: CheckpointRow, body: CheckpointBody): UnsoundCheckpoint | null {
  const seq = body.runs[0]?.from ?? 0;
  const named = `archive ${row.archive}'s checkpoint`;
  const covered = body.runs.reduce((n, r) => n + r.to - r.from + 1, 0);
  if (row.sha256 !== checkpointSha256(body) || covered !== body.entries)
    return { seq, reason: `was archived, but ${named} was changed: it does not match its SHA-256` };
  const sig = row.signature;
  let signed = false;
  try {
    signed =
      sig !== null &&
      row.key !== null &&
      sig.public_key === row.key &&
      verify(
        null,
        Buffer.from(checkpointText(body), "utf8"),
        createPublicKey({ key: Buffer.from(row.key, "base64"), format: "der", type: "spki" }),
        Buffer.from(sig.value, "base64"),
      );
  } catch {
    signed = false;
  }
  if (!signed) return { seq, reason: `was archived, but ${named} is not signed by one of Settle's evidence keys` };
  if (body.firstUnsound !== null)
    return {
      seq: body.firstUnsound,
      reason: `was changed or moved before retention archived it (${named} says so)`,
    };
  return null;
}

/**
 * The runs of every checkpoint of a chain, in order of place, and the first checkpoint that does not hold (its
 * hash, its signature by a key in evidence_keys, or the rows it was made from).
 */
export async function loadRuns(sql: Sql, chain: string): Promise<{ runs: Run[]; unsound: UnsoundCheckpoint | null }> {
  const rows = await sql.query<CheckpointRow>(
    `SELECT c.archive, c.chain, c.entries::text AS entries, c.runs, c.last_hash, c.sha256,
            c.first_unsound::text AS first_unsound, c.signature, k.public_key AS key
       FROM audit_checkpoints c LEFT JOIN evidence_keys k ON k.id = c.signature->>'key_id'
      WHERE c.chain = $1 ORDER BY c.archive`,
    [chain],
  );
  let unsound: UnsoundCheckpoint | null = null;
  const runs: Run[] = [];
  for (const row of rows) {
    const body: CheckpointBody = {
      archive: row.archive,
      chain: row.chain,
      entries: Number(row.entries),
      runs: row.runs.map(([from, to, firstPrev, lastHash]) => ({ from, to, firstPrev, lastHash })),
      lastHash: row.last_hash,
      firstUnsound: row.first_unsound === null ? null : Number(row.first_unsound),
    };
    const bad = judge(row, body);
    if (bad && (!unsound || bad.seq < unsound.seq)) unsound = bad;
    runs.push(...body.runs);
  }
  return { runs: runs.sort((a, b) => a.from - b.from), unsound };
}

/** The run holding this place, if any. */
export function runAt(runs: readonly Run[], seq: number): Run | undefined {
  let [lo, hi] = [0, runs.length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const run = runs[mid]!;
    if (seq < run.from) hi = mid - 1;
    else if (seq > run.to) lo = mid + 1;
    else return run;
  }
  return undefined;
}
