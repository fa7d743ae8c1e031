import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNKNOWN_ENTRY } from "@/lib/metrics/sql";
import { queueOrderSql } from "@/lib/outcome/queue-order";
import {
  effectiveStatus,
  invocationStatuses,
  stalledSql,
  statusFilterSql,
  type InvocationStatus,
  type StoredStatus,
} from "@/lib/outcome/status";
import { writeStatement } from "@/lib/write/write-statement";
import { openSettle, type TestContext } from "./harness";

// Indexes that PostgreSQL uses only when a query states the same expression:
// each migration's expression must still say what the TypeScript rule the
// query is generated from says. PostgreSQL normalises both (pg_get_indexdef),
// so the comparison is of meaning, not spacing: an index built from today's
// constants must read exactly like the one the migrations made.

async function indexDef(t: TestContext, name: string): Promise<string> {
  const rows = await t.db.driver.query<{ def: string }>(`SELECT pg_get_indexdef(to_regclass($1)) AS def`, [name]);
  return rows[0]!.def.replace(`INDEX ${name} ON`, "INDEX x ON");
}

async function defFromCode(t: TestContext, name: string, statement: string): Promise<string> {
  await t.db.driver.query(statement);
  try {
    return await indexDef(t, name);
  } finally {
    await t.db.driver.query(`DROP INDEX ${name}`);
  }
}

describe("the migrations' expression indexes match the rules the queries are generated from", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("invocations_queue_order_idx is the queue's order (lib/outcome/queue-order.ts)", async () => {
    const key = queueOrderSql("");
    const fromCode = await defFromCode(
      t,
      "queue_order_from_code",
      `CREATE INDEX queue_order_from_code ON invocations ((${key.tier}), (${key.rank}), (${key.since}), id)`,
    );
    expect(await indexDef(t, "invocations_queue_order_idx")).toBe(fromCode);
  });

  it("invocations_queue_count_idx holds the queue's tiers that need a person (lib/outcome/queue-order.ts)", async () => {
    const key = queueOrderSql("");
    const fromCode = await defFromCode(
      t,
      "queue_count_from_code",
      `CREATE INDEX queue_count_from_code ON invocations ((${key.tier})) INCLUDE (runtime_id, status, stall_at, effect_class, duplicate_review, args_review) WHERE (${key.tier}) <= 1`,
    );
    expect(await indexDef(t, "invocations_queue_count_idx")).toBe(fromCode);
  });

  it("invocation_transitions_unknown_entry_idx's predicate is the metrics' UNKNOWN_ENTRY", async () => {
    const predicate = UNKNOWN_ENTRY.replaceAll("t.", "");
    const fromCode = await defFromCode(
      t,
      "unknown_entry_from_code",
      `CREATE INDEX unknown_entry_from_code ON invocation_transitions (invocation_uid, id) INCLUDE (at, tool, runtime_id, from_status, to_status) WHERE ${predicate}`,
    );
    expect(await indexDef(t, "invocation_transitions_unknown_entry_idx")).toBe(fromCode);
  });

  it("the queue's query is answered from the order index (the planner matches the generated form)", async () => {
    const key = queueOrderSql("i.");
    // One connection for both statements, so the setting applies to the EXPLAIN.
    const plan = await t.db.driver.withSession(async (session) => {
      await session.query("SET enable_seqscan = off");
      return session.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT i.id FROM invocations i ORDER BY ${key.tier}, ${key.rank}, ${key.since}, i.id LIMIT 50`,
      );
    });
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("invocations_queue_order_idx");
  });
});

describe("the status filters' SQL (statusFilterSql, stalledSql) select exactly what effectiveStatus says", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  const now = new Date("2026-12-01T12:00:00.000Z");
  const stallTimes = [null, "2026-12-01T11:59:59.999Z", now.toISOString(), "2026-12-01T12:00:00.001Z"];
  const stored = invocationStatuses.filter((s): s is StoredStatus => s !== "stalled");
  const rows = stored.flatMap((status) => stallTimes.map((stallAt) => ({ status, stallAt })));
  const filters: InvocationStatus[][] = [
    ["pending"],
    ["stalled"],
    ["pending", "stalled"],
    ["stalled", "outcome_unknown"],
    ["pending", "failed"],
    ["succeeded"],
    [...invocationStatuses],
  ];

  async function select(where: (params: unknown[]) => string): Promise<string[]> {
    const params: unknown[] = [rows.map((r) => r.status), rows.map((r) => r.stallAt)];
    const condition = where(params);
    const found = await t.db.driver.query<{ n: number }>(
      `SELECT n::int FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS r(status, stall_at, n) WHERE ${condition} ORDER BY n`,
      params,
    );
    return found.map((f) => `${rows[f.n - 1]!.status}@${rows[f.n - 1]!.stallAt}`);
  }
  const expected = (keep: (s: InvocationStatus) => boolean) =>
    rows.filter((r) => keep(effectiveStatus(r.status, r.stallAt, now))).map((r) => `${r.status}@${r.stallAt}`);

  it.each(filters.map((f) => [f.join(",")]))("status=%s", async (list) => {
    const statuses = list.split(",") as InvocationStatus[];
    const got = await select((params) => {
      const bind = (value: unknown) => {
        params.push(value);
        return `$${params.length}`;
      };
      return statusFilterSql(statuses, "r.", () => `${bind(now.toISOString())}::timestamptz`, bind);
    });
    expect(got).toEqual(expected((s) => statuses.includes(s)));
  });

  it("stalledSql is effectiveStatus = stalled", async () => {
    const got = await select((params) => {
      params.push(now.toISOString());
      return stalledSql("r.", `$${params.length}::timestamptz`);
    });
    expect(got).toEqual(expected((s) => s === "stalled"));
  });
});

describe("the write path's statement stays cheap on its own connections (enable_seqscan off)", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("every table it reads has an index it can use: its planned cost stays under the JIT threshold", async () => {
    // Write connections run with enable_seqscan off (lib/db/driver.ts). A table the statement reads without a
    // usable index then costs the planner's penalty (10^10), which sends every write through JIT compilation:
    // a notification_channels check without an index once made a single-record ingest take ~580 ms.
    const all = Object.fromEntries(
      ["created", "changes", "attempts", "transitions", "search", "digests", "tasks", "notes", "checks"].map((p) => [
        p,
        true,
      ]),
    ) as Parameters<typeof writeStatement>[0];
    const { text } = writeStatement(all);
    const runtime = (await t.db.driver.query<{ id: string }>(`SELECT id::text FROM runtimes LIMIT 1`))[0]!.id;
    const params = [runtime, ...Array.from({ length: 9 }, () => "[]")];
    const plan = await t.db.driver.withSession(async (session) => {
      await session.query("SET enable_seqscan = off");
      await session.query("SET plan_cache_mode = force_generic_plan");
      return session.query<{ "QUERY PLAN": Array<{ Plan: { "Total Cost": number } }> }>(
        `EXPLAIN (FORMAT JSON) ${text}`,
        params,
      );
    });
    const cost = plan[0]!["QUERY PLAN"][0]!.Plan["Total Cost"];
    const threshold = Number(
      (await t.db.driver.query<{ v: string }>(`SELECT current_setting('jit_above_cost') AS v`))[0]!.v,
    );
    expect(cost, `the write statement's planned cost is ${cost}`).toBeLessThan(threshold);
  });
});
