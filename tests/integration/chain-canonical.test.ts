import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalSql, CHAIN_KINDS, CHAINED, contentSql, type ChainKind } from "@/lib/chain/entries";
import { splicedContentSql } from "@/lib/chain/spliced";
import { elementSql, rowsSpliceable, TRANSITION_COLUMNS, type RowColumn } from "@/lib/write/chain-links";
import { ATTEMPT_ROW_COLUMNS } from "@/lib/write/write-statement";
import { openSettle, type Backend, type TestContext } from "./harness";

// Format 1 of an entry's canonical content is defined as `jsonb_build_array(kind, …columns)::text` (decision 041);
// every hash stored so far was made from it. The writer and the walk print it with json_build_array, which costs
// less: these properties hold the two to the same bytes for any value a row can hold, and for a writer that hands
// a jsonb column json or text.

/** The definition of format 1, as it was first written. */
function formatOne(kind: ChainKind, value: (column: string) => string): string {
  const parts = CHAINED[kind].columns.map(([name, form]) =>
    form === "time"
      ? `to_char((${value(name)})::timestamptz(3) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      : value(name),
  );
  return `jsonb_build_array('${kind}', ${parts.join(", ")})::text`;
}

// Text as people and runtimes send it: any code point but NUL (PostgreSQL's text refuses it), with the ones JSON
// must escape made likely.
const text = fc
  .oneof(
    fc.string({ unit: "binary", maxLength: 24 }),
    fc.string({
      unit: fc.constantFrom("\n", "\t", '"', "\\", "/", "\u0001", "\u001f", "\u007f", "\u2028", "é", "😀", "a"),
      maxLength: 12,
    }),
  )
  .map((s) => s.replaceAll("\u0000", ""));
const json: fc.Arbitrary<unknown> = fc
  .jsonValue({ maxDepth: 3 })
  .map((v) => JSON.parse(JSON.stringify(v).replaceAll("\\u0000", "")));
// Numbers as JSON text: big, negative, with exponents and trailing zeros (jsonb keeps a numeric's scale).
const numberText = fc.constantFrom("1e3", "-0.0", "1.50", "12345678901234567890123", "2.5E-7", "0", "-17");

type Typed = { sql: string; value: fc.Arbitrary<unknown> };

function arbitraryOf(dataType: string): Typed {
  switch (dataType) {
    case "uuid":
      return { sql: "uuid", value: fc.option(fc.uuid(), { nil: null }) };
    case "integer":
      return { sql: "int", value: fc.option(fc.integer(), { nil: null }) };
    case "bigint":
      return {
        sql: "bigint",
        value: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), { nil: null }),
      };
    case "boolean":
      return { sql: "boolean", value: fc.option(fc.boolean(), { nil: null }) };
    case "timestamp with time zone":
      return {
        sql: "timestamptz",
        value: fc.option(
          fc
            .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true })
            .map((d) => d.toISOString()),
          { nil: null },
        ),
      };
    case "jsonb":
      return {
        sql: "jsonb",
        value: fc.option(
          fc.oneof(
            json.map((v) => JSON.stringify(v)),
            numberText.map((n) => `{"n": ${n}, "list": [${n}, " x "]}`),
          ),
          { nil: null },
        ),
      };
    case "text":
      return { sql: "text", value: fc.option(text, { nil: null }) };
    default:
      throw new Error(`no arbitrary for ${dataType}`);
  }
}

describe.each<Backend>(["postgres", "pglite"])("canonical content on %s", (backend) => {
  let t: TestContext;
  const columnTypes = new Map<ChainKind, Typed[]>();

  beforeAll(async () => {
    t = await openSettle(backend);
    for (const kind of CHAIN_KINDS) {
      const rows = await t.db.driver.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1`,
        [CHAINED[kind].table],
      );
      const typeOf = new Map(rows.map((r) => [r.column_name, r.data_type]));
      columnTypes.set(
        kind,
        CHAINED[kind].columns.map(([name]) => arbitraryOf(typeOf.get(name) ?? `missing column ${name}`)),
      );
    }
  });
  afterAll(async () => t.teardown());

  it.each(CHAIN_KINDS)("prints a %s entry as format 1 does, byte for byte", async (kind) => {
    const typed = columnTypes.get(kind)!;
    const columns = CHAINED[kind].columns.map(([name]) => name);
    await fc.assert(
      fc.asyncProperty(fc.tuple(...typed.map((c) => c.value)), fc.boolean(), async (values, asJson) => {
        // A writer may hand a jsonb column as json (printed as given) or as jsonb: both must print as stored.
        const param = (name: string) => {
          const i = columns.indexOf(name);
          const type = typed[i]!.sql === "jsonb" && asJson ? "json" : typed[i]!.sql;
          return `$${i + 1}::${type}`;
        };
        const rows = await t.db.driver.query<{ ours: string; reference: string }>(
          `SELECT ${canonicalSql(kind, param)} AS ours, ${formatOne(kind, param)} AS reference`,
          values,
        );
        expect(rows[0]!.ours).toBe(rows[0]!.reference);
      }),
      { numRuns: backend === "pglite" ? 60 : 150 },
    );
  });

  it("reads the columns of every chained table (a renamed column fails here, not in a pack)", () => {
    for (const kind of CHAIN_KINDS) expect(columnTypes.get(kind)!.length).toBe(CHAINED[kind].columns.length);
  });
});

// The write path's rows as JSON arrays (lib/write/chain-links.ts), each element written as the write's JSON text
// holds it: a jsonb element as raw JSON (exponents, trailing zeros), any other as JSON.stringify gives it. Half
// the rows have one element in a form PostgreSQL still takes but format 1 does not print (an upper-case uuid, a
// time with an offset, digits as a string): the gate must refuse them, or they would hash differently.
type RowValue = { json: string; value: unknown };
const shown = (value: unknown): RowValue => ({ json: JSON.stringify(value), value });
const canonicalTime = fc
  .date({ min: new Date("1000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const printed: Record<RowColumn[1], fc.Arbitrary<RowValue>> = {
  uuid: fc.uuid().map(shown),
  int: fc.integer().map(shown),
  timestamptz: canonicalTime.map(shown),
  text: text.map(shown),
  jsonb: fc.oneof(
    json.map(shown),
    numberText.map((n) => ({ json: `{"n": ${n}, "list": [${n}, " x "]}`, value: {} })),
  ),
};
const otherwise: Record<RowColumn[1], fc.Arbitrary<RowValue>> = {
  uuid: fc
    .uuid()
    .chain((u) => fc.constantFrom(u.toUpperCase(), u.replaceAll("-", "")))
    .map(shown),
  int: fc.integer().map(String).map(shown),
  timestamptz: fc
    .oneof(
      canonicalTime.map((t) => t.replace("Z", "456Z")),
      canonicalTime.map((t) => t.replace("Z", "+00:00")),
      canonicalTime.map((t) => t.replace(/\.\d+Z$/, "Z")),
      fc
        .date({ min: new Date("0100-01-01T00:00:00Z"), max: new Date("0999-12-31T00:00:00Z") })
        .map((d) => d.toISOString()),
    )
    .map(shown),
  text: fc.oneof(fc.integer(), fc.boolean()).map(shown),
  jsonb: printed.jsonb,
};
function rowOf(columns: readonly RowColumn[]): fc.Arbitrary<RowValue[]> {
  const elements = columns.map(([name, type]) =>
    name === "invocation_uid" ? printed[type] : fc.option(printed[type], { nil: shown(null), freq: 4 }),
  );
  return fc
    .tuple(fc.tuple(...elements), fc.option(fc.nat(columns.length - 1), { freq: 2 }))
    .chain(([row, odd]) =>
      odd === null ? fc.constant(row) : otherwise[columns[odd]![1]].map((v) => row.map((e, i) => (i === odd ? v : e))),
    );
}

describe.each<Backend>(["postgres", "pglite"])("spliced content on %s", (backend) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle(backend);
  });
  afterAll(async () => t.teardown());

  it.each([
    ["attempt", ATTEMPT_ROW_COLUMNS],
    ["transition", TRANSITION_COLUMNS],
  ] as const)("hashes a spliceable %s row as format 1 does, byte for byte", async (kind, columns) => {
    let spliceable = 0;
    const runs = backend === "pglite" ? 60 : 200;
    await fc.assert(
      fc.asyncProperty(rowOf(columns), fc.uuid(), canonicalTime, async (row, runtime, written) => {
        if (!rowsSpliceable([row.map((e) => e.value)], columns)) return;
        spliceable += 1;
        const typed = (column: string) =>
          column === "runtime_id"
            ? "$2::uuid"
            : column === CHAINED[kind].columns.at(-1)![0]
              ? "$3::timestamptz"
              : `t.${column}`;
        const rows = await t.db.driver.query<{ same: boolean; reference: string; spliced: string }>(
          `SELECT ${splicedContentSql(kind, "$2::uuid::text", "x.r", "$3::timestamptz")} = ${contentSql(kind, typed)} AS same,
                    ${canonicalSql(kind, typed)} AS reference, x.r::text AS spliced
               FROM (SELECT $1::jsonb AS r) x, LATERAL (SELECT ${columns.map(elementSql).join(", ")}) t`,
          [`[${row.map((e) => e.json).join(",")}]`, runtime, written],
        );
        expect(rows[0], `${rows[0]!.reference}\nspliced from ${rows[0]!.spliced}`).toMatchObject({ same: true });
      }),
      { numRuns: runs },
    );
    // Not a property that held by never being tried: about half the rows are spliceable.
    expect(spliceable).toBeGreaterThan(runs / 4);
  });
});
