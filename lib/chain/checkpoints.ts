import type { Sql } from "../db/driver";

// What an archive took out of a chain. When retention archives rows of a chained table and then drops or deletes
// them (a month's partition, a batch of the kept shelf or of the audit trail), it leaves one checkpoint per chain
// the rows were in: how many entries left, the runs of consecutive places they held, and for each run the link
// hash its first entry followed and the link hash of its last. The walk (verify.ts) accepts a missing place only
// inside a run, and checks the entries on both sides against the run's hashes, so a chain stays checkable across
// what retention removed. The checkpoint's own SHA-256 (over its canonical JSON) is kept with it and in the
// archive's manifest entry; a restore brings the rows back in their places and the walk reads them again.

/** A run of consecutive places that left in one archive. Hashes are hex. */
export type Run = { from: number; to: number; firstPrev: string; lastHash: string };

export type Checkpoint = {
  archive: string;
  chain: string;
  entries: number;
  runs: Run[];
  lastHash: string;
  sha256: string;
};

/** The runs of every checkpoint of a chain, in order of place. */
export async function loadRuns(sql: Sql, chain: string): Promise<Run[]> {
  const rows = await sql.query<{ runs: Array<[number, number, string, string]> }>(
    `SELECT runs FROM audit_checkpoints WHERE chain = $1`,
    [chain],
  );
  return rows
    .flatMap((r) => r.runs.map(([from, to, firstPrev, lastHash]) => ({ from, to, firstPrev, lastHash })))
    .sort((a, b) => a.from - b.from);
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
