import type { Sql } from "../db/driver";
import { ADMIN_CHAIN, CHAIN_KINDS, CHAINED, contentSql, GENESIS, type ChainKind } from "./entries";
import { linkHash } from "./link";
import { loadRuns, runAt, type Run } from "./checkpoints";

// The walk: a chain's entries in order of place, each one's content hashed again from the row as stored and
// its link checked against the one before; places that are missing must have left through an archive
// (checkpoints.ts). The first entry that does not hold is named and the walk of that chain stops there.

export type BrokenEntry = { seq: number; kind: ChainKind | null; key: string | null; reason: string };
export type ChainReport = {
  chain: string;
  /** The runtime's name, or `admin`. */
  name: string;
  /** Entries read (archived places are not counted). */
  checked: number;
  /** Places crossed because retention archived them (their checkpoints held). */
  archived: number;
  from: number;
  head: number;
  broken: BrokenEntry | null;
};
export type WalkOptions = {
  /** Start at the first entry written at or after this time (its link to the one before is not checked). */
  from?: Date;
  /** Start this many places before the head (the job's hourly look at the newest links). */
  newest?: number;
  /** Rows outside the chain are looked for only among those written since (default: since the chain began). */
  unchainedSince?: Date;
};

const PAGE = 2_000;
const runtimeKinds = CHAIN_KINDS.filter((k) => k !== "admin");

type EntryRow = {
  kind: ChainKind;
  key: string;
  chain_seq: string | number;
  chain_prev: Buffer | null;
  chain_content: Buffer | null;
  actual: Buffer;
};

const stored = (column: string) => `t.${column}`;

/** The SQL of one kind's rows of a chain between two places ($1 runtime, $2 after, $3 up to). */
function pageSql(kinds: readonly ChainKind[], admin: boolean): string {
  return kinds
    .map((kind) => {
      const { table, key } = CHAINED[kind];
      const where = admin ? "" : "t.runtime_id = $1::uuid AND ";
      const [after, upTo] = admin ? ["$1", "$2"] : ["$2", "$3"];
      return `SELECT '${kind}' AS kind, t.${key}::text AS key, t.chain_seq, t.chain_prev, t.chain_content,
                     ${contentSql(kind, stored)} AS actual
                FROM ${table} t WHERE ${where}t.chain_seq > ${after}::bigint AND t.chain_seq <= ${upTo}::bigint`;
    })
    .join("\n UNION ALL ")
    .concat(" ORDER BY 3, 1, 2");
}

const chainKinds = (chain: string) => (chain === ADMIN_CHAIN ? (["admin"] as const) : runtimeKinds);

async function readPage(sql: Sql, chain: string, after: number, upTo: number): Promise<EntryRow[]> {
  const admin = chain === ADMIN_CHAIN;
  return sql.query<EntryRow>(pageSql(chainKinds(chain), admin), admin ? [after, upTo] : [chain, after, upTo]);
}

/** A row of a chained table written since `since` that has no place in the chain: inserted around Settle. */
async function findUnchained(sql: Sql, chain: string, since: string): Promise<BrokenEntry | null> {
  for (const kind of chainKinds(chain)) {
    const { table, key, written } = CHAINED[kind];
    const admin = chain === ADMIN_CHAIN;
    const [row] = await sql.query<{ key: string }>(
      `SELECT t.${key}::text AS key FROM ${table} t
        WHERE ${admin ? "" : "t.runtime_id = $2::uuid AND "}t.chain_seq IS NULL AND t.${written} >= $1::timestamptz LIMIT 1`,
      admin ? [since] : [since, chain],
    );
    if (row) return { seq: 0, kind, key: row.key, reason: "is not in the chain: it was written around Settle" };
  }
  return null;
}

/** The place of the first entry written at or after `from`. */
async function firstPlaceSince(sql: Sql, chain: string, from: Date): Promise<number | null> {
  const admin = chain === ADMIN_CHAIN;
  const parts = chainKinds(chain).map((kind) => {
    const { table, written } = CHAINED[kind];
    return `SELECT min(t.chain_seq) AS s FROM ${table} t WHERE ${admin ? "" : "t.runtime_id = $2::uuid AND "}t.${written} >= $1::timestamptz`;
  });
  const [row] = await sql.query<{ s: string | null }>(
    `SELECT min(s)::text AS s FROM (${parts.join(" UNION ALL ")}) x`,
    admin ? [from.toISOString()] : [from.toISOString(), chain],
  );
  return row?.s ? Number(row.s) : null;
}

/** `startedAt` is the database's text of a time: rows of the chain written since must be in it. */
export type ChainHead = { chain: string; name: string; seq: number; hash: Buffer | null; startedAt: string };

/** Every chain there should be: the admin chain and one per runtime (a runtime with no head has written nothing). */
export async function loadChainHeads(sql: Sql): Promise<ChainHead[]> {
  const rows = await sql.query<{
    chain: string;
    name: string;
    seq: string | null;
    hash: Buffer | null;
    started_at: string | null;
  }>(
    `SELECT c.chain, c.name, h.seq::text AS seq, h.hash, coalesce(h.started_at, a.started_at)::text AS started_at
       FROM (SELECT '${ADMIN_CHAIN}' AS chain, '${ADMIN_CHAIN}' AS name, 0 AS o
             UNION ALL SELECT id::text, name, 1 FROM runtimes) c
       LEFT JOIN audit_chain_heads h ON h.chain = c.chain
       LEFT JOIN audit_chain_heads a ON a.chain = '${ADMIN_CHAIN}'
      ORDER BY c.o, c.name`,
  );
  return rows.map((r) => ({
    chain: r.chain,
    name: r.name,
    seq: r.seq === null ? 0 : Number(r.seq),
    hash: r.hash,
    startedAt: r.started_at ?? "-infinity",
  }));
}

const hex = (b: Uint8Array | null) => (b ? Buffer.from(b).toString("hex") : "");

/** Walks one chain (see the top of this file). */
export async function walkChain(sql: Sql, head: ChainHead, options: WalkOptions = {}): Promise<ChainReport> {
  const report: ChainReport = {
    chain: head.chain,
    name: head.name,
    checked: 0,
    archived: 0,
    from: 1,
    head: head.seq,
    broken: null,
  };
  const fail = (broken: BrokenEntry) => ({ ...report, broken });
  const outside = await findUnchained(sql, head.chain, options.unchainedSince?.toISOString() ?? head.startedAt);
  if (outside) return fail(outside);

  let expected = 1;
  // The link hash the next entry must name as its predecessor; null where the walk starts mid-chain.
  let prev: Buffer | null = GENESIS;
  if (options.newest !== undefined) expected = Math.max(1, head.seq - options.newest + 1);
  if (options.from) expected = (await firstPlaceSince(sql, head.chain, options.from)) ?? head.seq + 1;
  if (expected > 1) prev = null;
  report.from = expected;
  const { runs, unsound } = await loadRuns(sql, head.chain);
  if (unsound) return fail({ ...unsound, kind: null, key: null });

  /** Places `expected`…`upTo` are missing: each must be in an archived run; the hash after the last, if known. */
  const crossGap = (upTo: number): BrokenEntry | null => {
    while (expected <= upTo) {
      const run: Run | undefined = runAt(runs, expected);
      if (!run)
        return { seq: expected, kind: null, key: null, reason: "is missing: deleted, or moved out of its place" };
      if (prev && run.from === expected && run.firstPrev !== hex(prev))
        return {
          seq: expected,
          kind: null,
          key: null,
          reason: "was archived, but its archive's checkpoint does not follow the entry before it",
        };
      const end = Math.min(run.to, upTo);
      report.archived += end - expected + 1;
      prev = end === run.to ? Buffer.from(run.lastHash, "hex") : null;
      expected = end + 1;
    }
    return null;
  };

  const check = (r: EntryRow): BrokenEntry | null => {
    const seq = Number(r.chain_seq);
    const entry = { seq, kind: r.kind, key: r.key };
    if (seq > head.seq) return { ...entry, reason: "lies past the chain's head: moved or added around Settle" };
    if (seq < expected) return { ...entry, reason: "shares its place with the entry before it" };
    const gap = crossGap(seq - 1);
    if (gap) return gap;
    if (!r.chain_content || !r.chain_prev || !Buffer.from(r.actual).equals(r.chain_content))
      return { ...entry, reason: "was changed: its content does not match its hash" };
    if (prev && !prev.equals(r.chain_prev))
      return {
        ...entry,
        reason: `does not follow entry #${seq - 1}: that entry or this one's link was changed, or entries were moved`,
      };
    prev = linkHash(r.chain_prev, r.chain_content);
    expected = seq + 1;
    report.checked += 1;
    return null;
  };
  // Up to the head a page at a time, then whatever lies past it (an entry there is out of place).
  for (let after = expected - 1; after < head.seq; after += PAGE) {
    for (const r of await readPage(sql, head.chain, after, Math.min(after + PAGE, head.seq))) {
      const broken = check(r);
      if (broken) return fail(broken);
    }
  }
  // Places missing at the end come before whatever lies past the head, in the chain's order.
  const tail = crossGap(head.seq);
  if (tail) return fail(tail);
  const [beyond] = await readPage(sql, head.chain, Math.max(head.seq, expected - 1), Number.MAX_SAFE_INTEGER);
  if (beyond) return fail(check(beyond)!);
  if (prev && head.hash && head.seq > 0 && !prev.equals(head.hash))
    return fail({ seq: head.seq, kind: null, key: null, reason: "is not the entry the chain's head recorded last" });
  return report;
}

/**
 * A walk's transaction settings: heads and entries read as of one moment. Read in several snapshots beside the
 * writers, a walk finds entries committed after it read their head, and names them "past the head".
 */
export const ONE_MOMENT: readonly string[] = [
  "transaction_isolation = 'repeatable read'",
  "transaction_read_only = on",
];

/** Walks every chain (or one runtime's and, unless `runtime` is given, the admin chain); run it in a ONE_MOMENT transaction. */
export async function verifyChains(sql: Sql, options: WalkOptions & { runtime?: string } = {}): Promise<ChainReport[]> {
  const heads = await loadChainHeads(sql);
  const chosen = options.runtime
    ? heads.filter((h) => h.chain !== ADMIN_CHAIN && (h.name === options.runtime || h.chain === options.runtime))
    : heads;
  const reports: ChainReport[] = [];
  for (const head of chosen) reports.push(await walkChain(sql, head, options));
  return reports;
}
