import type { Statement } from "../db/driver";
import { processWide } from "../process-wide";
import { CHAIN_COLUMNS, chainLinks, elementSql, type RowColumn } from "./chain-links";

// The write path's one statement (written by states.ts's writeStates), built for
// the parts a write has. One statement, so one round trip and no transaction
// around it: a batch's writes all happen or none do.
//
// Locks are taken in one order by every writer — changed invocations (in
// invocation id order), then new invocations, then the rows keyed by them
// alone, then the runtime's chain head, then attempts (by event key), then
// the rest — each step reading an aggregate of the one before, so that
// it starts only when the one before has finished, and concurrent writers
// queue instead of deadlocking. Afterwards it checks that it wrote exactly
// what it was given: anything a concurrent writer did first (a version
// bumped, an invocation created, a record stored) raises
// serialization_failure (settle_write_conflict, migration *_write_path), which
// undoes the whole statement, and the writer reads again.

/** Columns of `invocations` that the fold writes, and their SQL types. */
export const STATE_COLUMNS = [
  ["tool", "text"],
  ["effect_class", "text"],
  ["idempotency_key", "text"],
  ["status", "text"],
  ["commit_state", "text"],
  ["next_action", "text"],
  ["conflict", "boolean"],
  ["attempt_count", "int"],
  ["first_seen_at", "timestamptz"],
  ["last_attempt_at", "timestamptz"],
  ["status_since", "timestamptz"],
  ["stall_at", "timestamptz"],
  ["not_before", "timestamptz"],
  ["assignee", "text"],
  ["user_message", "text"],
  ["last_code", "text"],
  ["resolution", "jsonb"],
  ["fold", "jsonb"],
  ["args_digest", "text"],
  ["summary", "text"],
] as const;
/** An attempt's columns after uid and seq, in the order of an `AttemptRow` (event_key first: rows are sorted by it). */
export const ATTEMPT_COLUMNS = [
  ["event_key", "text"],
  ["event_id", "text"],
  ["attempt_id", "text"],
  ["attempt_no", "int"],
  ["phase", "text"],
  ["at", "timestamptz"],
  ["tool", "text"],
  ["effect_class", "text"],
  ["idempotency_key", "text"],
  ["budget_left_s", "int"],
  ["args_digest", "text"],
  ["dialect", "text"],
  ["wrapper_dialect", "text"],
  ["outcome", "text"],
  ["commit_state", "text"],
  ["code", "text"],
  ["category", "text"],
  ["retry_directive", "text"],
  ["not_before", "timestamptz"],
  ["max_attempts_remaining", "int"],
  ["next_action", "text"],
  ["dispatch_stage", "text"],
  ["probe_result", "text"],
  ["safe_details", "jsonb"],
  ["agent_message", "text"],
  ["user_message", "text"],
  ["items", "jsonb"],
  ["envelope", "jsonb"],
  ["ignored", "jsonb"],
  ["arguments", "jsonb"],
  ["summary", "text"],
] as const satisfies readonly RowColumn[];
/** An attempt's row as the write statement reads it: its invocation's uid, its seq, then ATTEMPT_COLUMNS. */
export const ATTEMPT_ROW_COLUMNS: readonly RowColumn[] = [
  ["invocation_uid", "uuid"],
  ["seq", "int"],
  ...ATTEMPT_COLUMNS,
];

/** Which parts a write has; each present part is one jsonb parameter, in this order. */
export type WriteParts = {
  created: boolean;
  changes: boolean;
  attempts: boolean;
  transitions: boolean;
  search: boolean;
  digests: boolean;
  tasks: boolean;
  notes: boolean;
  checks: boolean;
};
const ORDER: Array<keyof WriteParts> = [
  "created",
  "changes",
  "attempts",
  "transitions",
  "search",
  "digests",
  "tasks",
  "notes",
  "checks",
];

const recordset = (columns: ReadonlyArray<readonly [string, string]>) =>
  columns.map(([c, t]) => `${c} ${t}`).join(", ");
const STATE_NAMES = STATE_COLUMNS.map(([c]) => c);
const ATTEMPT_NAMES = ATTEMPT_COLUMNS.map(([c]) => c);

function build(p: WriteParts, spliced: boolean): string {
  // $1 is the runtime; each present part has the next parameter.
  const param: Partial<Record<keyof WriteParts, string>> = {};
  let n = 1;
  for (const part of ORDER) if (p[part]) param[part] = `$${(n += 1)}::jsonb`;
  const ctes: string[] = [];
  const checks: string[] = [];
  let barrier: string | null = null;
  const after = () => (barrier ? `${barrier}, ` : "");

  if (p.changes) {
    ctes.push(
      `changes AS (SELECT * FROM jsonb_to_recordset(${param.changes}) AS x(id uuid, expected int, version int, ${recordset(STATE_COLUMNS)}))`,
    );
    ctes.push(`locked AS (
      SELECT i.id, i.version FROM invocations i
       WHERE i.runtime_id = $1::uuid AND i.id = ANY(ARRAY(SELECT id FROM changes))
       ORDER BY i.invocation_id
       FOR UPDATE)`);
    ctes.push(
      `checked AS (SELECT count(*) FILTER (WHERE l.version = c.expected) AS current FROM locked l JOIN changes c USING (id))`,
    );
    checks.push(
      `(SELECT current FROM checked) <> jsonb_array_length(${param.changes}) THEN settle_write_conflict('an invocation changed since it was read')`,
    );
    barrier = "checked";
  }
  if (p.created) {
    ctes.push(`created AS (
      INSERT INTO invocations (id, runtime_id, invocation_id, task_id, version, updated_at, ${STATE_NAMES.join(", ")})
      SELECT x.id, $1::uuid, x.invocation_id, x.task_id, 1, now(), ${STATE_NAMES.map((c) => `x.${c}`).join(", ")}
        FROM ${after()}jsonb_to_recordset(${param.created}) AS x(id uuid, invocation_id text, task_id text, ${recordset(STATE_COLUMNS)})
       ORDER BY x.invocation_id
      ON CONFLICT (runtime_id, invocation_id) DO NOTHING
      RETURNING id)`);
    ctes.push(`created_n AS (SELECT count(*) AS n FROM created)`);
    checks.push(
      `(SELECT n FROM created_n) <> jsonb_array_length(${param.created}) THEN settle_write_conflict('an invocation was created meanwhile')`,
    );
    barrier = "created_n";
  }
  // What is keyed by this write's invocations alone (their states, search rows and digests: rows no other writer
  // can touch while it holds them) is written before the chain's head is locked, so it is not written while
  // other writers of the runtime wait for the head (decision 041).
  const early: string[] = [];
  if (p.changes) {
    early.push("updated");
    ctes.push(`updated AS (
      UPDATE invocations AS i SET version = x.version, updated_at = now(), ${STATE_NAMES.map((c) => `${c} = x.${c}`).join(", ")},
             args_review = CASE WHEN i.args_review IS NULL AND (x.fold ->> 'argsMismatch')::boolean THEN 'open' ELSE i.args_review END
        FROM ${after()}changes AS x
       WHERE i.runtime_id = $1::uuid AND i.id = x.id AND i.version = x.expected AND i.id = ANY(ARRAY(SELECT id FROM changes))
      RETURNING 1)`);
    checks.push(
      `(SELECT count(*) FROM updated) <> jsonb_array_length(${param.changes}) THEN settle_write_conflict('an invocation changed since it was read')`,
    );
  }
  if (p.search) {
    early.push("search");
    ctes.push(`search AS (
      INSERT INTO invocation_search (runtime_id, invocation_uid, ids)
      SELECT $1::uuid, s.uid, s.ids FROM ${after()}jsonb_to_recordset(${param.search}) AS s(uid uuid, ids text) ORDER BY s.uid
      ON CONFLICT (runtime_id, invocation_uid) DO UPDATE SET ids = excluded.ids
      RETURNING 1)`);
  }
  if (p.digests) {
    early.push("digests");
    // Which invocation carried which arguments digest (decision 028): written once per digest, never rewritten.
    ctes.push(`digests AS (
      INSERT INTO invocation_digests (runtime_id, tool, args_digest, invocation_uid)
      SELECT $1::uuid, d.tool, d.args_digest, d.uid FROM ${after()}jsonb_to_recordset(${param.digests}) AS d(uid uuid, tool text, args_digest text)
       ORDER BY d.tool, d.args_digest, d.uid
      ON CONFLICT DO NOTHING
      RETURNING 1)`);
  }
  // Attempts, transitions and guard answers join the runtime's hash chain (lib/chain, decision 041): their
  // inputs as rows (with `ord`, their order in the chain), then the links, taken after the invocations' locks
  // and the writes above.
  const attemptValues = ATTEMPT_ROW_COLUMNS.map(elementSql).join(", ");
  const chained = chainLinks({ ...p, spliced }, param, barrier ? [barrier, ...early] : early, attemptValues);
  ctes.push(...chained.ctes);
  if (p.attempts) {
    ctes.push(`stored AS (
      INSERT INTO attempts (runtime_id, invocation_uid, seq, ${ATTEMPT_NAMES.join(", ")}, received_at, ${CHAIN_COLUMNS})
      SELECT a.runtime_id, a.invocation_uid, a.seq, ${ATTEMPT_NAMES.map((c) => `a.${c}`).join(", ")}, a.received_at, ${chained.values("attempt_in", "a")}
        FROM ${chained.from("attempt_in", "a")}
       ORDER BY a.event_key
      ON CONFLICT (runtime_id, event_key, shelf) DO NOTHING
      RETURNING 1)`);
    checks.push(
      `(SELECT count(*) FROM stored) <> jsonb_array_length(${param.attempts}) THEN settle_write_conflict('a record was stored meanwhile')`,
    );
  }
  if (p.transitions) {
    // With no enabled webhook endpoint for the runtime and no notification channel that hears of it there is
    // nobody to fan a change out to: it is written as fanned out, so the job neither rewrites it nor finds it
    // in its index.
    ctes.push(`transitions AS (
      INSERT INTO invocation_transitions (invocation_uid, runtime_id, tool, effect_class, from_status, to_status, commit_state, resolution_by,
                                          not_before, version, at, recorded_at, fanned_out, ${CHAIN_COLUMNS})
      SELECT t.invocation_uid, t.runtime_id, t.tool, t.effect_class, t.from_status, t.to_status, t.commit_state, t.resolution_by,
             t.not_before, t.version, t.at, t.recorded_at,
             NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.runtime_id = $1::uuid AND e.enabled)
             AND NOT EXISTS (SELECT 1 FROM notification_channels c WHERE c.enabled
                              AND (cardinality(c.runtimes) = 0 OR (SELECT name FROM runtimes WHERE id = $1::uuid) = ANY(c.runtimes))),
             ${chained.values("transition_in", "t")}
        FROM ${chained.from("transition_in", "t")})`);
  }
  if (p.tasks) {
    ctes.push(`tasks AS (
      INSERT INTO tasks (runtime_id, task_id, first_seen_at, last_seen_at)
      SELECT $1::uuid, t.task_id, t.first, t.last FROM jsonb_to_recordset(${param.tasks}) AS t(task_id text, first timestamptz, last timestamptz)
       ORDER BY t.task_id
      ON CONFLICT (runtime_id, task_id) DO UPDATE
        SET first_seen_at = LEAST(tasks.first_seen_at, excluded.first_seen_at), last_seen_at = GREATEST(tasks.last_seen_at, excluded.last_seen_at)
        WHERE tasks.first_seen_at > excluded.first_seen_at OR tasks.last_seen_at < excluded.last_seen_at)`);
  }
  if (p.notes) {
    // Trust-metric rollups (decision 009) may already count an invocation first seen more than 10 minutes
    // ago: a change to one is noted with the values it had before. The 5 minutes between this bound and
    // the rollups' 15 cover the time from a write to its commit.
    ctes.push(`notes AS (
      INSERT INTO metric_dirty (uid, runtime_id, first_seen_at, committed_since, idempotency_key)
      SELECT n.uid, $1::uuid, n.first_seen_at, n.committed_since, n.idempotency_key
        FROM jsonb_to_recordset(${param.notes}) AS n(uid uuid, first_seen_at timestamptz, earliest timestamptz, committed_since timestamptz, idempotency_key text)
       WHERE n.earliest < clock_timestamp() - interval '10 minutes')`);
  }
  if (p.checks) {
    // The guard's answer (lib/guard/guard.ts), kept with the intent it allowed.
    ctes.push(`checks AS (
      INSERT INTO guard_checks (id, runtime_id, task_id, invocation_id, tool, idempotency_key, allow, reason, at, ${CHAIN_COLUMNS})
      SELECT gen_random_uuid(), g.runtime_id, g.task_id, g.invocation_id, g.tool, g.idempotency_key, g.allow, g.reason, g.at, ${chained.values("check_in", "g")}
        FROM ${chained.from("check_in", "g")})`);
  }
  const verdict =
    checks.length > 0 ? `CASE ${checks.map((c) => `WHEN ${c}`).join("\n             ")} ELSE true END` : "true";
  // PostgreSQL must see $1 even in a write of none of the runtime's rows.
  return `WITH ${ctes.join(",\n    ")}\n    SELECT ${verdict} AS written, $1::uuid AS runtime`;
}

const built = processWide("writeStatements", () => new Map<string, Statement>());

/**
 * The statement for a write with these parts, named so each connection prepares it once. `spliced`: every
 * attempt's and transition's row is spliceable (`rowsSpliceable`), so their content hashes are made from the rows'
 * text (lib/chain/spliced.ts) instead of column by column.
 */
export function writeStatement(parts: WriteParts, spliced = false): Statement {
  const mask = ORDER.map((part) => (parts[part] ? "1" : "0")).join("") + (spliced ? "s" : "");
  let statement = built.get(mask);
  if (!statement) built.set(mask, (statement = { name: `settle_write_${mask}`, text: build(parts, spliced) }));
  return statement;
}
