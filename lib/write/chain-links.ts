import { CHAIN_COLUMNS, contentSql } from "../chain/entries";
import { isSpliceable, splicedContentSql, type SpliceForm } from "../chain/spliced";

// The write statement's part of the hash chain (lib/chain, decision 041): the attempts, transitions and guard
// answers it inserts, as rows numbered in one order (`ord`: attempts, then transitions, then answers), their
// content hashes (`chain_c`), and their places and predecessors' link hashes (`chain_l`) from
// settle_chain_append, which locks the runtime's chain head. It is called after the steps named by `after` (the
// invocations' locks, the created invocations and the writes keyed by them alone), so the head is the statement's
// last lock but for the task rows, and writers queue instead of deadlocking; the head stays locked until the
// statement commits, so places follow commit order, and what is written before it is not written under it.

export { CHAIN_COLUMNS };

/** Which chained parts a write has, and whether its attempts' and transitions' rows are all spliceable. */
type ChainedParts = Record<ChainedPart, boolean> & { spliced: boolean };
type ChainedPart = "attempts" | "transitions" | "checks";

/** A column of a row the write statement reads from a JSON array, and its SQL type. */
export type RowColumn = readonly [name: string, type: "text" | "uuid" | "int" | "timestamptz" | "jsonb"];

/**
 * A transition's row: its columns in the order of its canonical content, between the runtime and recorded_at
 * (lib/chain/entries.ts), so the row is spliceable (lib/chain/spliced.ts).
 */
export const TRANSITION_COLUMNS: readonly RowColumn[] = [
  ["invocation_uid", "uuid"],
  ["tool", "text"],
  ["effect_class", "text"],
  ["from_status", "text"],
  ["to_status", "text"],
  ["commit_state", "text"],
  ["resolution_by", "text"],
  ["not_before", "timestamptz"],
  ["version", "int"],
  ["at", "timestamptz"],
];

/** The SQL of column `i` of the JSON array `r`, typed. */
export const elementSql = ([name, type]: RowColumn, i: number) =>
  `${type === "jsonb" ? `nullif(r -> ${i}, 'null'::jsonb)` : type === "text" ? `r ->> ${i}` : `(r ->> ${i})::${type}`} AS ${name}`;

const formOf = (type: RowColumn[1]): SpliceForm => (type === "timestamptz" ? "time" : type);

/** Whether every row of `rows` (arrays of `columns`' values) is spliceable: its content made from the row's text. */
export function rowsSpliceable(rows: ReadonlyArray<readonly unknown[]>, columns: readonly RowColumn[]): boolean {
  const forms = columns.map(([, type]) => formOf(type));
  return rows.every((row) => forms.every((form, i) => isSpliceable(form, row[i])));
}

const CHECK_FIELDS = `task_id text, invocation_id text, tool text, idempotency_key text, allow boolean, reason text, at timestamptz`;

/**
 * The CTEs of the chained parts present. `param` holds each part's parameter; `after` names the CTEs (each
 * returning rows) that must run before the head is locked; `attemptValues` is the SQL of an attempt's typed
 * columns from element `r` (its uid, seq and the rest), as the insert names them.
 */
export function chainLinks(
  p: ChainedParts,
  param: Partial<Record<ChainedPart, string>>,
  after: readonly string[],
  attemptValues: string,
): { ctes: string[]; from: (cte: string, alias: string) => string; values: (cte: string, alias: string) => string } {
  const ctes: string[] = [];
  const contents: string[] = [];
  let before = "0";
  const RUNTIME = "$1::uuid::text";
  const numbered = (part: string) => `jsonb_array_elements(${part}) WITH ORDINALITY AS x(r, o)`;
  if (p.attempts) {
    ctes.push(`attempt_in AS (
      SELECT x.o::int AS ord, $1::uuid AS runtime_id, ${attemptValues},
             now() AS received_at${p.spliced ? `, ${splicedContentSql("attempt", RUNTIME, "x.r", "now()")} AS content` : ""}
        FROM ${numbered(param.attempts!)})`);
    contents.push(`SELECT ord, ${p.spliced ? "content" : contentSql("attempt", (c) => `a.${c}`)} FROM attempt_in a`);
    before = `jsonb_array_length(${param.attempts})`;
  }
  if (p.transitions) {
    ctes.push(`transition_in AS (
      SELECT (${before} + x.o)::int AS ord, $1::uuid AS runtime_id, ${TRANSITION_COLUMNS.map(elementSql).join(", ")},
             now() AS recorded_at${p.spliced ? `, ${splicedContentSql("transition", RUNTIME, "x.r", "now()")} AS content` : ""}
        FROM ${numbered(param.transitions!)})`);
    contents.push(
      `SELECT ord, ${p.spliced ? "content" : contentSql("transition", (c) => `t.${c}`)} FROM transition_in t`,
    );
    before = `${before} + jsonb_array_length(${param.transitions})`;
  }
  if (p.checks) {
    ctes.push(`check_in AS (
      SELECT (${before} + x.o)::int AS ord, $1::uuid AS runtime_id, g.task_id, g.invocation_id, g.tool, g.idempotency_key,
             g.allow, g.reason, g.at
        FROM ${numbered(param.checks!)}, jsonb_to_record(x.r) AS g(${CHECK_FIELDS}))`);
    contents.push(`SELECT ord, ${contentSql("guard", (c) => `g.${c}`)} FROM check_in g`);
  }
  if (contents.length > 0) {
    ctes.push(`chain_c AS (SELECT * FROM (${contents.join("\n       UNION ALL ")}) AS c(ord, content))`);
    ctes.push(`chain_l AS (
      SELECT * FROM settle_chain_append(${RUNTIME}, ARRAY(SELECT content FROM chain_c ORDER BY ord),
                                        ${after.length > 0 ? after.map((cte) => `(SELECT count(*) FROM ${cte})`).join(" + ") : "0"}))`);
  }
  // A spliced row carries its content hash, so its insert joins only the links.
  const own = (cte: string) => p.spliced && cte !== "check_in";
  return {
    ctes,
    from: (cte, alias) =>
      `${cte} ${alias}${own(cte) ? "" : ` JOIN chain_c ON chain_c.ord = ${alias}.ord`} JOIN chain_l ON chain_l.ord = ${alias}.ord`,
    values: (cte, alias) => `chain_l.seq, ${own(cte) ? alias : "chain_c"}.content, chain_l.prev`,
  };
}
