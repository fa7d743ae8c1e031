import pg from "pg";

// Where the database's time goes, per benchmark phase: pg_stat_statements,
// when the server loads it (shared_preload_libraries = 'pg_stat_statements').
// Without it the report says so and the bench runs on.

export type StatementCost = {
  query: string;
  calls: number;
  mean_ms: number;
  total_ms: number;
  rows: number;
  wal_records: number;
  shared_hit: number;
};

export type StatementWatch = {
  available: boolean;
  reset: () => Promise<void>;
  top: (limit?: number) => Promise<StatementCost[]>;
  close: () => Promise<void>;
};

export async function watchStatements(databaseUrl: string): Promise<StatementWatch> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "settle-bench-stats" });
  await client.connect();
  const available = await client
    .query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    .then(() => client.query("SELECT 1 FROM pg_stat_statements LIMIT 1"))
    .then(() => true)
    .catch(() => false);
  return {
    available,
    reset: async () => {
      if (available) await client.query("SELECT pg_stat_statements_reset()");
    },
    top: async (limit = 6) => {
      if (!available) return [];
      const { rows } = await client.query<StatementCost>(
        `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query, calls::int, round((total_exec_time / greatest(calls, 1))::numeric, 3)::float8 AS mean_ms,
                round(total_exec_time::numeric, 1)::float8 AS total_ms, rows::int, wal_records::int, shared_blks_hit::int AS shared_hit
           FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
          ORDER BY total_exec_time DESC LIMIT $1`,
        [limit],
      );
      return rows;
    },
    close: () => client.end(),
  };
}
