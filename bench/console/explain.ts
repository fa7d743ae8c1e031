import pg from "pg";
import type { Db } from "@/lib/db/client";
import { listQueue, queueQuerySchema } from "@/lib/queue/queue";

// EXPLAIN (ANALYZE, BUFFERS) of the queue's own SQL: listQueue runs against a
// stand-in driver that records the page and count statements it is given,
// so what is explained is exactly what the API sends, parameters included.
// Statements it reads to decide on a plan (whether a search is narrowed
// through its index) are answered by the real database.

export type CapturedQuery = { sql: string; params: unknown[] };

const isPage = (sql: string) => /ORDER BY/.test(sql) && /LIMIT/.test(sql);
const isCount = (sql: string) => /count\(\*\)::int AS total/.test(sql);

/** The statements listQueue sends for a URL query: the page and the count. */
export async function queueStatements(
  client: pg.Client,
  search: string,
): Promise<{ page: CapturedQuery; count: CapturedQuery }> {
  const captured: CapturedQuery[] = [];
  // Every statement goes through the driver (lib/db/README.md): the page and count are kept, anything
  // else listQueue reads to decide (a search's reach, the policies) is answered by the real database.
  const query = async (sql: string, params: unknown[] = []) => {
    if (!isPage(sql) && !isCount(sql)) return (await client.query(sql, params)).rows;
    captured.push({ sql, params });
    return [];
  };
  // The count runs in a transaction of its own (its settings); the stand-in has no settings to apply.
  const driver = { query, transaction: (fn: (tx: { query: typeof query }) => unknown) => fn({ query }) };
  const filter = queueQuerySchema.parse(Object.fromEntries(new URLSearchParams(search)));
  await listQueue({ driver } as unknown as Db, filter, { scope: {}, me: "bench-operator@example.com" });
  const page = captured.find((q) => isPage(q.sql));
  const count = captured.find((q) => isCount(q.sql));
  if (!page || !count) throw new Error(`listQueue sent no page and count query for "${search}"`);
  return { page, count };
}

export type Plan = { text: string; execution_ms: number };

export async function explain(client: pg.Client, q: CapturedQuery): Promise<Plan> {
  // Twice: the first run warms the cache, the second is the one reported.
  await client.query(`EXPLAIN (ANALYZE) ${q.sql}`, q.params);
  const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.params);
  const text = rows.map((r) => r["QUERY PLAN"]).join("\n");
  const ms = /Execution Time: ([\d.]+) ms/.exec(text);
  return { text, execution_ms: ms ? Number(ms[1]) : NaN };
}

export type IndexComparison = {
  index: string;
  query: string;
  without: { page: Plan; count: Plan };
  with: { page: Plan; count: Plan };
};

/** The page and count queries of `search` with `index` dropped, then as its migration creates it. */
export async function compareWithIndex(url: string, index: string, search: string): Promise<IndexComparison> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const plans = async () => {
    const { page, count } = await queueStatements(client, search);
    return { page: await explain(client, page), count: await explain(client, count) };
  };
  try {
    const { rows } = await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = $1`, [index]);
    if (rows.length === 0) throw new Error(`index ${index} is missing from the bench database`);
    // Inside a transaction that is rolled back: the index is never really gone.
    await client.query("BEGIN");
    await client.query(`DROP INDEX "${index}"`);
    const without = await plans();
    await client.query("ROLLBACK");
    return { index, query: search || "(default)", without, with: await plans() };
  } finally {
    await client.end();
  }
}
