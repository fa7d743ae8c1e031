import { getDb } from "../db/client";
import type { Sql, SqlDriver } from "../db/driver";
import { loadChainHeads, ONE_MOMENT, walkChain, type ChainReport } from "./verify";

// The job's look at the newest links (lib/jobs/audit-chain.ts): once an hour, each chain's last NEWEST entries
// walked and the rows written in the last two hours looked for outside the chain; the answer is kept on the
// chain's head (`broken`, `checked_at`) for the admins' banner and the `settle_audit_chain_broken` metric. The
// whole walk is `settle audit verify`.

const NEWEST = 1_000;
const EVERY_MS = 60 * 60 * 1000;

/** One line for a broken chain, as the banner shows it. */
export function describeBroken(report: ChainReport): string {
  const b = report.broken!;
  const where = report.name === "admin" ? "the admin audit" : `runtime ${report.name}`;
  const what = b.kind ? ` (${b.kind} ${b.key})` : "";
  return `${where}: ${b.seq > 0 ? `entry #${b.seq}` : "an entry"}${what} ${b.reason}`;
}

/** Walks the newest links of every chain not checked in the last hour. Returns the chains it found broken. */
export async function checkNewestLinks(sql: SqlDriver, now: Date): Promise<string[]> {
  const due = await sql.query<{ chain: string }>(
    `SELECT chain FROM audit_chain_heads WHERE checked_at IS NULL OR checked_at <= $1::timestamptz`,
    [new Date(now.getTime() - EVERY_MS).toISOString()],
  );
  if (due.length === 0) return [];
  const wanted = new Set(due.map((d) => d.chain));
  const broken: string[] = [];
  const reports = await sql.transaction(
    async (tx) => {
      const walked: ChainReport[] = [];
      for (const head of (await loadChainHeads(tx)).filter((h) => wanted.has(h.chain))) {
        walked.push(
          await walkChain(tx, head, { newest: NEWEST, unchainedSince: new Date(now.getTime() - 2 * EVERY_MS) }),
        );
      }
      return walked;
    },
    { settings: ONE_MOMENT },
  );
  for (const report of reports) {
    const line = report.broken ? describeBroken(report) : null;
    if (line) broken.push(line);
    await sql.query(`UPDATE audit_chain_heads SET checked_at = $2::timestamptz, broken = $3 WHERE chain = $1`, [
      report.chain,
      now.toISOString(),
      line,
    ]);
  }
  return broken;
}

/** What the last checks found broken, one line per chain (the banner's text). */
export async function listBrokenChains(sql: Sql): Promise<string[]> {
  const rows = await sql.query<{ broken: string }>(
    `SELECT broken FROM audit_chain_heads WHERE broken IS NOT NULL ORDER BY chain`,
  );
  return rows.map((r) => r.broken);
}

/** The same, on the app's database: the console's banner for admins. */
export async function listBrokenChainsForBanner(): Promise<string[]> {
  return listBrokenChains((await getDb()).driver);
}
