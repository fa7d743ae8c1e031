import { CHAINED, timeSql, type ChainKind } from "./entries";

// A cheaper way for a writer to make format 1's bytes (decision 047). The write path hands PostgreSQL each
// attempt and status change as a JSON array whose elements are the entry's columns in the content's order. When
// every element is already in the form format 1 prints its column in, the canonical content is that array as
// jsonb prints it, between the kind and runtime and the time it was written: one jsonb_out of the row instead of
// json_build_array's type lookup and output call for each of some 35 columns (docs/benchmarks.md). The walk
// still prints the stored row column by column (`contentSql`), so a row spliced here that did not print the same
// would show as an edited entry; `isSpliceable` is the gate, and a write with any row it refuses is hashed
// column by column as before. tests/integration/chain-canonical.test.ts holds the two to the same bytes.

/** How format 1 prints a column's value, by the column's SQL type. */
export type SpliceForm = "text" | "uuid" | "int" | "time" | "jsonb";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Years 1000–9999: to_char's YYYY prints four digits there, as toISOString does.
const TIME = /^[1-9]\d{3}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const INT4 = 2 ** 31;

/**
 * Whether a row element prints in the jsonb array as format 1 prints its column's value: text as a JSON string,
 * a uuid as its lower-case form, an int as a JSON integer, a time as UTC to the millisecond (what to_char gives),
 * null for a NULL. A jsonb column is the array's element itself, so any value is.
 */
export function isSpliceable(form: SpliceForm, value: unknown): boolean {
  if (value === null || value === undefined || form === "jsonb") return true;
  switch (form) {
    case "text":
      return typeof value === "string";
    case "uuid":
      return typeof value === "string" && UUID.test(value);
    case "int":
      return Number.isInteger(value) && (value as number) >= -INT4 && (value as number) < INT4;
    case "time":
      return typeof value === "string" && TIME.test(value) && new Date(value).toISOString() === value;
  }
}

/**
 * The content hash (SQL, bytea) of an entry of `kind` made from `row`, the SQL of a jsonb array of its columns
 * after the runtime and before the last, each spliceable; `runtime` is the SQL of the runtime's id as text, and
 * `written` the SQL of the last column, the time it was written. The parts before and after the row are the same
 * for every row of a statement, so they are printed once (scalar subqueries).
 */
export function splicedContentSql(kind: ChainKind, runtime: string, row: string, written: string): string {
  const columns = CHAINED[kind].columns;
  const [first] = columns[0]!;
  const [last, lastForm] = columns[columns.length - 1]!;
  // The row's first and last elements are not jsonb, so its brackets are its first and last bytes and nothing
  // else at its ends (a string, a number or null is).
  if (first !== "runtime_id" || lastForm !== "time" || columns[1]![1] === "jsonb" || columns.at(-2)![1] === "jsonb")
    throw new Error(`${kind}'s content cannot be spliced (${first} … ${last})`);
  const head = `(SELECT convert_to('["${kind}", "' || (${runtime}) || '", ', 'UTF8'))`;
  const tail = `(SELECT convert_to(', "' || ${timeSql(written)} || '"]', 'UTF8'))`;
  return `sha256(${head} || btrim(convert_to((${row})::text, 'UTF8'), '\\x5b5d'::bytea) || ${tail})`;
}
