import { closedStatuses } from "../outcome/status";
import type { RetentionSet } from "./settings";
import type { ShelvedTable } from "./shelves";

// What retention may take, in one place (docs/operations.md "Data retention"). An invocation's history may
// leave only when the invocation is closed (lib/outcome/status.ts), holds no open evidence conflict, no open
// review of a possible duplicate or of changed arguments, and closed longer ago than its runtime's period.
// Anything else keeps its rows however old they are. The metrics' rollups are never taken.

export type Period = "attempts_days" | "audit_days";

/** Each runtime's cutoff for one period, and the default's: rows of invocations closed before it may go. */
export type Cutoffs = { byRuntime: Array<{ runtime_id: string; cutoff: string }>; fallback: string };

export function cutoffsFor(set: RetentionSet, period: Period, now: Date): Cutoffs {
  const before = (daysAgo: number) => new Date(now.getTime() - daysAgo * 86_400_000).toISOString();
  return {
    byRuntime: [...set.own].map(([runtime_id, p]) => ({ runtime_id, cutoff: before(p[period]) })),
    fallback: before(set.fallback[period]),
  };
}

/** The shortest period of any runtime: no month ends sooner than this before it can hold rows that may go. */
export function shortestDays(set: RetentionSet, period: Period): number {
  return Math.min(set.fallback[period], ...[...set.own.values()].map((p) => p[period]));
}

/** The runtimes whose own period is shorter than the default's. */
export function shorterThanDefault(set: RetentionSet, period: Period): string[] {
  return [...set.own].filter(([, p]) => p[period] < set.fallback[period]).map(([runtime]) => runtime);
}

/** The parameters `expiredSql` refers to, in its order: closed statuses, runtime cutoffs, the default cutoff. */
export const expiredParams = (c: Cutoffs): unknown[] => [closedStatuses, JSON.stringify(c.byRuntime), c.fallback];

/**
 * SQL that is true when invocation `i` may lose its history. `first` is the number of the first of the three
 * parameters `expiredParams` gives.
 */
function expiredSql(i: string, first: number): string {
  const [statuses, cutoffs, fallback] = [first, first + 1, first + 2].map((n) => `$${n}`);
  return `(${i}.status = ANY(${statuses}::text[]) AND NOT ${i}.conflict
    AND ${i}.duplicate_review IS DISTINCT FROM 'open' AND ${i}.args_review IS DISTINCT FROM 'open'
    AND ${i}.status_since < coalesce((SELECT c.cutoff FROM jsonb_to_recordset(${cutoffs}::jsonb) AS c(runtime_id uuid, cutoff timestamptz)
                                      WHERE c.runtime_id = ${i}.runtime_id), ${fallback}::timestamptz))`;
}

const byUid = (row: string) => `i.runtime_id = ${row}.runtime_id AND i.id = ${row}.invocation_uid`;

/**
 * How each table's rows name their invocation, and what a table keeps whatever its invocation: a transition not
 * yet fanned out still owes a webhook its event. (A guard answer names the invocation by the runtime's id.)
 */
const rowRules: Record<
  ShelvedTable | "invocation_actions",
  { invocation: (row: string) => string; held?: (row: string) => string }
> = {
  attempts: { invocation: byUid },
  invocation_transitions: { invocation: byUid, held: (row) => `NOT ${row}.fanned_out` },
  guard_checks: { invocation: (row) => `i.runtime_id = ${row}.runtime_id AND i.invocation_id = ${row}.invocation_id` },
  invocation_actions: { invocation: byUid },
};

/**
 * SQL that is true when row `row` of `table` may go: its invocation may lose its history (`expiredSql`,
 * parameters from `first`) and its table does not hold it for its own reason. A row whose invocation is not
 * there stays.
 */
export function rowMayGoSql(table: keyof typeof rowRules, row: string, first: number): string {
  const { invocation, held } = rowRules[table];
  const expired = `EXISTS (SELECT 1 FROM invocations i WHERE ${invocation(row)} AND ${expiredSql("i", first)})`;
  return held ? `(${expired} AND NOT ${held(row)})` : expired;
}
