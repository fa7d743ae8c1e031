import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSettle, type Backend, type TestContext } from "./harness";

// The schema stays ready to distribute by runtime (decision 036, docs/operations.md "Scaling"): over the migrated
// schema, every primary and unique key of a table that holds a runtime's data leads with runtime_id, and every
// foreign key between such tables carries runtime_id on both sides. Citus requires exactly this of tables
// distributed by a column. A new table is held to the rule unless it is named below with why it is exempt.

/** Reference tables (small, the same on every node) and the outbox keyed by its endpoint or channel. */
const EXEMPT: Record<string, string> = {
  _prisma_migrations: "the migration history",
  runtimes: "identity: the runtimes themselves",
  runtime_keys: "identity: a runtime's keys, looked up by prefix before the runtime is known",
  user: "identity: people",
  session: "identity: sign-in sessions",
  account: "identity: sign-in credentials",
  verification: "identity: sign-in tokens",
  personal_tokens: "identity: people's tokens",
  password_resets: "identity: reset links",
  rateLimit: "sign-in limits per address",
  sign_in_failures: "sign-in limits per account",
  saved_views: "a person's saved queue filters",
  policies: "global settings: policies per effect class",
  policy_changes: "global settings: their history",
  admin_actions: "the admin audit trail: people, keys, settings",
  tool_catalog_entries: "global settings: the tool catalog, a small reference table",
  webhook_endpoints: "settings: where a runtime's events go, a small reference table",
  notification_channels: "settings: channels may cover several runtimes",
  notification_scans: "the notification job's bookmarks",
  notification_items: "the outbox of a channel, which may cover several runtimes: keyed by channel",
  webhook_deliveries: "the outbox, keyed by endpoint or channel",
  webhook_attempts: "the outbox's delivery log, keyed by delivery",
  metric_rollup_state: "one row: how far the rollups reach",
  settings_version: "one row: the version of the settings instances keep in memory (decision 040)",
  retention_settings: "global settings: retention periods",
  retention_archives: "the retention job's own record of archives",
  server_addresses: "where people reach the servers, a small reference table",
  audit_chain_heads: "one row a chain (a runtime's or the admin trail's): its head, locked to append (decision 041)",
  audit_checkpoints: "the retention job's checkpoints of retired months, a small reference table (decision 041)",
  evidence_keys: "the keys that sign evidence packs, a small reference table",
  slack_settings: "one row: the Slack app's settings",
  slack_links: "identity: a person's Slack user",
  slack_link_codes: "identity: one-time codes that link a Slack user",
  slack_command_codes: "identity: one-time codes a person types into Slack's /settle link",
  slack_requests_seen: "Slack's signatures seen lately, refused if replayed",
  slack_messages: "the messages a Slack channel holds, keyed by channel like the outbox",
};

type Key = { table: string; name: string; columns: string[] };

describe.each<Backend>(["postgres", "pglite"])("keys of the migrated schema on %s", (backend) => {
  let t: TestContext;
  let tables: Array<{ name: string; has_runtime: boolean }>;
  let keys: Key[];
  let foreign: Array<Key & { parent: string; parent_columns: string[] }>;

  beforeAll(async () => {
    t = await openSettle(backend);
    const sql = t.db.driver;
    tables = await sql.query(
      `SELECT c.relname AS name,
              EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'runtime_id' AND NOT a.attisdropped) AS has_runtime
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
    );
    const columns = `(SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(%s) WITH ORDINALITY k(attnum, n)
                        JOIN pg_attribute a ON a.attrelid = %s AND a.attnum = k.attnum)`;
    keys = await sql.query(
      `SELECT c.relname AS table, i.relname AS name, ${columns.replace("%s", "x.indkey").replace("%s", "c.oid")} AS columns
         FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND x.indisunique AND NOT c.relispartition`,
    );
    foreign = await sql.query(
      `SELECT c.relname AS table, f.conname AS name, p.relname AS parent,
              ${columns.replace("%s", "f.conkey").replace("%s", "f.conrelid")} AS columns,
              ${columns.replace("%s", "f.confkey").replace("%s", "f.confrelid")} AS parent_columns
         FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class p ON p.oid = f.confrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND f.contype = 'f' AND NOT c.relispartition`,
    );
  });
  afterAll(async () => {
    await t?.teardown();
  });

  const runtimeTables = () => tables.filter((x) => !(x.name in EXEMPT));

  it("names every exempt table that exists, and finds the runtime's tables", () => {
    const names = new Set(tables.map((x) => x.name));
    expect(Object.keys(EXEMPT).filter((name) => !names.has(name))).toEqual([]);
    expect(runtimeTables().map((x) => x.name)).toEqual(
      expect.arrayContaining(["attempts", "invocations", "invocation_actions", "invocation_transitions", "tasks"]),
    );
  });

  it("gives every table of a runtime's data a runtime_id", () => {
    expect(
      runtimeTables()
        .filter((x) => !x.has_runtime)
        .map((x) => x.name),
    ).toEqual([]);
  });

  it("leads every primary and unique key of a runtime's tables with runtime_id", () => {
    const inScope = new Set(runtimeTables().map((x) => x.name));
    const offending = keys
      .filter((k) => inScope.has(k.table) && k.columns[0] !== "runtime_id")
      .map((k) => `${k.table}.${k.name} (${k.columns.join(", ")})`);
    expect(offending).toEqual([]);
    // Each has a primary key (a partitioned table's includes its partition column).
    const withKey = new Set(keys.map((k) => k.table));
    expect([...inScope].filter((name) => !withKey.has(name))).toEqual([]);
  });

  it("keeps every foreign key between a runtime's tables inside one runtime", () => {
    const inScope = new Set(runtimeTables().map((x) => x.name));
    const crossing = foreign
      .filter((f) => inScope.has(f.table) && inScope.has(f.parent))
      .filter((f) => f.columns[0] !== "runtime_id" || f.parent_columns[0] !== "runtime_id")
      .map((f) => `${f.table}.${f.name} → ${f.parent}`);
    expect(crossing).toEqual([]);
  });
});
