// What each chained entry's canonical content is (format 1). The content is a JSON array — the entry's kind,
// then these columns in this order — as PostgreSQL's jsonb prints it, with every time as UTC to the
// millisecond (`2026-12-07T09:00:00.123Z`), so the same stored row always gives the same bytes, whatever the
// session's time zone. The writer computes it in SQL from the values it inserts, the walk from the row as
// stored: one SQL expression (`contentSql`), so they cannot disagree. Never change a list: stored hashes were
// made with it (a new column joins a new format, not this one).
//
// Left out on purpose: ids a default makes (transitions', guard answers', actions' and admin entries' own ids),
// `shelf` (retention moves a row to the kept shelf) and `fanned_out` (the webhook job sets it later). An entry
// is found by its place in its chain, not by its id.

/**
 * A column of a chained table; `time` is printed in UTC to the millisecond, `jsonb` marks a jsonb column (its
 * value is cast to jsonb before printing, so a writer's json or text value prints as the stored jsonb does).
 */
type Column = readonly [name: string, form?: "time" | "jsonb"];

export const CHAIN_KINDS = ["attempt", "transition", "action", "guard", "admin"] as const;
export type ChainKind = (typeof CHAIN_KINDS)[number];

type ChainedTable = {
  table: string;
  /** The column that names one entry in a message (with the runtime, for a runtime's chain). */
  key: string;
  /** When the entry was written (Settle's clock): rows outside the chain written after it began are broken. */
  written: string;
  columns: readonly Column[];
};

export const CHAINED: Record<ChainKind, ChainedTable> = {
  attempt: {
    table: "attempts",
    key: "event_key",
    written: "received_at",
    columns: [
      ["runtime_id"],
      ["invocation_uid"],
      ["seq"],
      ["event_key"],
      ["event_id"],
      ["attempt_id"],
      ["attempt_no"],
      ["phase"],
      ["at", "time"],
      ["tool"],
      ["effect_class"],
      ["idempotency_key"],
      ["budget_left_s"],
      ["args_digest"],
      ["dialect"],
      ["wrapper_dialect"],
      ["outcome"],
      ["commit_state"],
      ["code"],
      ["category"],
      ["retry_directive"],
      ["not_before", "time"],
      ["max_attempts_remaining"],
      ["next_action"],
      ["dispatch_stage"],
      ["probe_result"],
      ["safe_details", "jsonb"],
      ["agent_message"],
      ["user_message"],
      ["items", "jsonb"],
      ["envelope", "jsonb"],
      ["ignored", "jsonb"],
      ["arguments", "jsonb"],
      ["summary"],
      ["received_at", "time"],
    ],
  },
  transition: {
    table: "invocation_transitions",
    key: "id",
    written: "recorded_at",
    columns: [
      ["runtime_id"],
      ["invocation_uid"],
      ["tool"],
      ["effect_class"],
      ["from_status"],
      ["to_status"],
      ["commit_state"],
      ["resolution_by"],
      ["not_before", "time"],
      ["version"],
      ["at", "time"],
      ["recorded_at", "time"],
    ],
  },
  action: {
    table: "invocation_actions",
    key: "id",
    written: "at",
    columns: [
      ["runtime_id"],
      ["invocation_uid"],
      ["seq"],
      ["action"],
      ["actor"],
      ["at", "time"],
      ["from_status"],
      ["to_status"],
      ["note"],
      ["payload", "jsonb"],
    ],
  },
  guard: {
    table: "guard_checks",
    key: "id",
    written: "at",
    columns: [
      ["runtime_id"],
      ["task_id"],
      ["invocation_id"],
      ["tool"],
      ["idempotency_key"],
      ["allow"],
      ["reason"],
      ["at", "time"],
    ],
  },
  admin: {
    table: "admin_actions",
    key: "id",
    written: "at",
    columns: [
      ["actor"],
      ["action"],
      ["target_type"],
      ["target_id"],
      ["before", "jsonb"],
      ["after", "jsonb"],
      ["at", "time"],
    ],
  },
};

/** The admin audit's chain; a runtime's chain is named by the runtime's id. */
export const ADMIN_CHAIN = "admin";

/** The first entry's predecessor: 32 zero bytes. */
export const GENESIS = Buffer.alloc(32);

/** A time as format 1 prints it (SQL text): UTC to the column's millisecond, whatever the session's time zone. */
export function timeSql(value: string): string {
  return `to_char((${value})::timestamptz(3) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * The canonical content of an entry of `kind` as SQL text: `value(column)` is the SQL of each column's value
 * (`t.at` for a stored row; the inserted value for a writer).
 */
export function canonicalSql(kind: ChainKind, value: (column: string) => string): string {
  const parts = CHAINED[kind].columns.map(([name, form]) =>
    form === "time" ? timeSql(value(name)) : form === "jsonb" ? `(${value(name)})::jsonb` : value(name),
  );
  // json_build_array prints each value as jsonb_build_array(…)::text would (jsonb values through jsonb's own
  // output, text escaped the same way, the same ", " between elements) without first building a jsonb of the
  // whole row: the same bytes, in about a third less time per attempt (docs/benchmarks.md). jsonb columns are
  // cast first, since json_build_array prints a json value as it was given; tests/integration/
  // chain-canonical.test.ts holds the two forms to the same bytes.
  return `json_build_array('${kind}'::text, ${parts.join(", ")})::text`;
}

/** SHA-256 of the canonical content, as SQL (bytea). */
export function contentSql(kind: ChainKind, value: (column: string) => string): string {
  return `sha256(convert_to(${canonicalSql(kind, value)}, 'UTF8'))`;
}

/** The three chain columns an INSERT of a chained table names after its own. */
export const CHAIN_COLUMNS = "chain_seq, chain_content, chain_prev";

/**
 * The CTEs that link new rows of `kind` to their chain, for a statement that has them as CTE `values` — every
 * column of the kind's content and `ord`, their order in the chain: `chain_c` (each row's content hash) and
 * `chain_l` (each row's place and predecessor's link hash). The chain's head is locked by the statement and stays
 * locked until the transaction ends. `chain` is the SQL of the chain's name.
 */
export function chainCtes(kind: ChainKind, chain: string, values: string): string {
  return `chain_c AS (SELECT v.ord, ${contentSql(kind, (column) => `v.${column}`)} AS content FROM ${values} v),
    chain_l AS (SELECT * FROM settle_chain_append(${chain}, ARRAY(SELECT content FROM chain_c ORDER BY ord)))`;
}

/** The INSERT of `values`' rows (named `columns`) with their chain columns, after `chainCtes`. */
export function chainedInsert(kind: ChainKind, values: string, columns: readonly string[], returning = ""): string {
  return `INSERT INTO ${CHAINED[kind].table} (${columns.join(", ")}, ${CHAIN_COLUMNS})
    SELECT ${columns.map((column) => `v.${column}`).join(", ")}, chain_l.seq, chain_c.content, chain_l.prev
      FROM ${values} v JOIN chain_c ON chain_c.ord = v.ord JOIN chain_l ON chain_l.ord = v.ord${returning ? `\n    RETURNING ${returning}` : ""}`;
}

/**
 * One INSERT of chained rows of `kind`, in a single statement: `values` is a SELECT of the new rows — every
 * column of `columns` (which must include every column of the kind's content) and `ord`, their order in the
 * chain (see `chainCtes`).
 */
export function chainedInsertSql(kind: ChainKind, chain: string, values: string, columns: readonly string[]): string {
  return `WITH v AS (${values}),\n    ${chainCtes(kind, chain, "v")}\n    ${chainedInsert(kind, "v", columns)}`;
}
