import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalSql, CHAIN_KINDS, CHAINED, type ChainKind } from "@/lib/chain/entries";
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
