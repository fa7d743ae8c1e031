import pg from "pg";
import { txOf, type Tx } from "@/lib/db/driver";
import { foldFromHistory } from "@/lib/write/states";
import type { DerivedInvocation } from "@/lib/outcome/fold";
import { BIG_TASK } from "./generate";

// The generated rows must be what Settle itself would have written: folds a
// sample of invocations (and the whole long task) with lib/outcome/fold.ts and
// compares every derived column with the stored one. A mismatch stops the
// benchmark, since pages over inconsistent rows measure nothing real.

type Stored = {
  id: string;
  runtime_id: string;
  invocation_id: string;
  status: string;
  commit_state: string;
  next_action: string;
  version: number;
  conflict: boolean;
  attempt_count: number;
  first_seen_at: Date;
  last_attempt_at: Date;
  status_since: Date;
  stall_at: Date | null;
  not_before: Date | null;
  assignee: string | null;
  user_message: string | null;
  last_code: string | null;
  resolution: unknown;
  summary: string | null;
  records: number;
};

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
// jsonb keeps its own key order: compare objects with their keys sorted.
const canonical = (v: unknown) =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x,
  );

function differences(row: Stored, d: DerivedInvocation): string[] {
  const pairs: Array<[string, unknown, unknown]> = [
    ["status", row.status, d.status],
    ["commit_state", row.commit_state, d.commitState],
    ["next_action", row.next_action, d.nextAction],
    ["conflict", row.conflict, d.conflict],
    ["attempt_count", row.attempt_count, d.attemptCount],
    ["first_seen_at", iso(row.first_seen_at), iso(d.firstSeenAt)],
    ["last_attempt_at", iso(row.last_attempt_at), iso(d.lastAttemptAt)],
    ["status_since", iso(row.status_since), iso(d.statusSince)],
    ["stall_at", iso(row.stall_at), iso(d.stallAt)],
    ["not_before", iso(row.not_before), iso(d.notBefore)],
    ["assignee", row.assignee, d.assignee],
    ["user_message", row.user_message, d.userMessage],
    ["last_code", row.last_code, d.lastCode],
    ["resolution", canonical(row.resolution), canonical(d.resolution)],
    ["summary", row.summary, d.summary],
  ];
  return pairs.filter(([, a, b]) => a !== b).map(([name, a, b]) => `${name}: stored ${String(a)}, fold ${String(b)}`);
}

/** Throws, naming the first mismatches, unless every sampled invocation folds to its stored columns. */
export async function checkWorkload(url: string, sample = 2_000): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<Stored>(
      `SELECT i.id::text, i.runtime_id::text, i.invocation_id, i.status, i.commit_state, i.next_action, i.version, i.conflict, i.attempt_count,
              i.first_seen_at, i.last_attempt_at, i.status_since, i.stall_at, i.not_before, i.assignee, i.user_message,
              i.last_code, i.resolution, i.summary,
              (SELECT count(*) FROM attempts a WHERE a.invocation_uid = i.id)::int
                + (SELECT count(*) FROM invocation_actions x WHERE x.invocation_uid = i.id)::int AS records
         FROM invocations i
        WHERE i.id IN (SELECT id FROM invocations TABLESAMPLE BERNOULLI (${(100 * sample) / 250_000}) REPEATABLE (7))
           OR i.task_id = $1`,
      [BIG_TASK],
    );
    const tx: Tx = txOf(client);
    const derived = new Map<string, DerivedInvocation>();
    for (const runtimeId of new Set(rows.map((r) => r.runtime_id))) {
      const folded = await foldFromHistory(
        tx,
        runtimeId,
        rows.filter((r) => r.runtime_id === runtimeId).map((r) => r.id),
      );
      for (const [uid, d] of folded) derived.set(uid, d);
    }
    const problems: string[] = [];
    for (const row of rows) {
      const d = derived.get(row.id);
      const found = d ? differences(row, d) : ["no records"];
      if (row.version !== row.records) found.push(`version ${row.version}, but ${row.records} records and actions`);
      if (found.length > 0) problems.push(`${row.invocation_id} (${row.status}): ${found.join("; ")}`);
    }
    if (problems.length > 0) {
      throw new Error(
        `${problems.length} of ${rows.length} generated invocations differ from their fold:\n${problems.slice(0, 10).join("\n")}`,
      );
    }
    return rows.length;
  } finally {
    await client.end();
  }
}
