import pg from "pg";
import type { Db } from "@/lib/db/client";
import { listQueue, queueQuerySchema } from "@/lib/domain/queue";

// EXPLAIN (ANALYZE, BUFFERS) of the queue's own SQL: listQueue runs against a
// stand-in database that only records the statements it is given, so what is
// explained is exactly what the API sends, parameters included.

export type CapturedQuery = { sql: string; params: unknown[] };

/** The statements listQueue sends for a URL query: the page and the count. */
export async function queueStatements(search: string): Promise<{ page: CapturedQuery; count: CapturedQuery }> {
  const captured: CapturedQuery[] = [];
  // Raw SQL is recorded; any other read (a model's findMany, say) finds nothing.
  const models = new Proxy({}, { get: () => async () => [] });
  const prisma = new Proxy(
    {
      $queryRawUnsafe: async (sql: string, ...params: unknown[]) => {
        captured.push({ sql, params });
        return [];
      },
    },
    { get: (target, name) => (name in target ? target[name as keyof typeof target] : models) },
  );
  const query = queueQuerySchema.parse(Object.fromEntries(new URLSearchParams(search)));
  await listQueue({ prisma } as unknown as Db, query, { scope: {}, me: "bench-operator@example.com" });
  const page = captured.find((q) => /ORDER BY/.test(q.sql) && /LIMIT/.test(q.sql));
  const count = captured.find((q) => /count\(\*\)/.test(q.sql) && q !== page);
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

export type IndexComparison = { index: string; query: string; without: { page: Plan; count: Plan }; with: { page: Plan; count: Plan } };

/** The page and count queries of `search` with `index` dropped, then as its migration creates it. */
export async function compareWithIndex(url: string, index: string, search: string): Promise<IndexComparison> {
  const { page, count } = await queueStatements(search);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = $1`, [index]);
    if (rows.length === 0) throw new Error(`index ${index} is missing from the bench database`);
    // Inside a transaction that is rolled back: the index is never really gone.
    await client.query("BEGIN");
    await client.query(`DROP INDEX "${index}"`);
    const without = { page: await explain(client, page), count: await explain(client, count) };
    await client.query("ROLLBACK");
    return { index, query: search || "(default)", without, with: { page: await explain(client, page), count: await explain(client, count) } };
  } finally {
    await client.end();
  }
}
