import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as attemptsRoute } from "@/app/api/v1/invocations/[invocation_id]/attempts/route";
import type { Statement, Tx } from "@/lib/db/driver";
import { forgetRows } from "@/lib/write/known-rows";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getDecision, getInvocation, ingest } from "./routes";

// The 10,000th attempt of one invocation costs what the 10th does: ingest
// folds new records onto the stored state, so what it sends the database and
// reads back does not grow with the history (counted here statement by
// statement and row by row, not timed). And the invocation stays readable:
// the latest attempts with a count, the rest a page at a time.

const T0 = Date.now() - 86_400_000;
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const ID = "inv-long";

type Traffic = { statements: string[]; rowsBack: number };

describe.each<Backend>(["postgres", "pglite"])("an invocation with 10,000 attempts on %s", (backend) => {
  let t: TestContext;
  let traffic: Traffic | null = null;

  /** Notes what the write path sends and reads while `traffic` is set. */
  function watch(tx: Tx): Tx {
    const query = tx.query;
    return {
      query: async <T>(statement: Statement | string, params?: unknown[]) => {
        const rows = await query<T>(statement, params);
        if (traffic) {
          traffic.statements.push(
            typeof statement === "string" ? statement.slice(0, 40) : (statement.name ?? statement.text.slice(0, 40)),
          );
          traffic.rowsBack += rows.length;
        }
        return rows;
      },
    };
  }

  beforeAll(async () => {
    t = await openSettle(backend);
    t.db.driver.write = watch(t.db.driver.write);
    const transaction = t.db.driver.transaction;
    t.db.driver.transaction = (fn, options) => transaction((tx) => fn(watch(tx)), options);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  /** Attempt n: its intent, then a retryable failure (the runtime will try again). */
  const recordsOf = (n: number) => [
    {
      event_id: `e${n}-i`,
      task_id: "task-long",
      invocation_id: ID,
      tool: "sync_ledger",
      effect_class: "create",
      attempt: n,
      phase: "intent",
      at: at(n * 2),
    },
    {
      event_id: `e${n}-o`,
      task_id: "task-long",
      invocation_id: ID,
      tool: "sync_ledger",
      effect_class: "create",
      attempt: n,
      phase: "outcome",
      at: at(n * 2 + 1),
      envelope: { outcome: "retryable", effect_applied: "no", retry_after_s: 1 },
    },
  ];

  async function measure(records: object[], cold: boolean): Promise<Traffic> {
    // Cold: as another app instance would, with nothing of the invocation remembered.
    if (cold) forgetRows(t.db.driver, (await t.db.prisma.runtime.findFirstOrThrow()).id, [ID]);
    traffic = { statements: [], rowsBack: 0 };
    const res = await call(ingest, { key: t.key, body: { records } });
    const seen = traffic;
    traffic = null;
    expect(res.body.accepted).toBe(records.length);
    return seen;
  }

  it("the 10,000th attempt sends and reads what the 10th did", async () => {
    for (let n = 1; n <= 9; n += 1) await call(ingest, { key: t.key, body: { records: recordsOf(n) } });
    const tenthWarm = await measure(recordsOf(10).slice(0, 1), false);
    const tenthCold = await measure(recordsOf(10).slice(1), true);

    // Attempts 11 to 4,999: 500 records a request.
    for (let n = 11; n < 5_000; n += 250) {
      const batch = Array.from({ length: Math.min(250, 5_000 - n) }, (_, i) => recordsOf(n + i)).flat();
      const res = await call(ingest, { key: t.key, body: { records: batch } });
      expect(res.body.accepted).toBe(batch.length);
    }
    const last = recordsOf(5_000);
    const lastWarm = await measure(last.slice(0, 1), false);
    const lastCold = await measure(last.slice(1), true);

    expect(lastWarm).toEqual(tenthWarm);
    expect(lastCold).toEqual(tenthCold);
    // One statement when this process wrote the row last; a read (the row and the stored keys) and the write otherwise.
    expect(tenthWarm.statements).toHaveLength(1);
    expect(tenthCold.statements).toHaveLength(2);
    expect([...tenthCold.statements, ...lastCold.statements].join(" ")).not.toMatch(/history/);

    const inv = await call(getInvocation, { key: t.key, params: { invocation_id: ID } });
    expect(inv.body).toMatchObject({
      status: "retry_scheduled",
      attempt_count: 5_000,
      attempts_total: 10_000,
      version: expect.any(Number),
    });
    expect(inv.body.attempts).toHaveLength(200);
    expect(inv.body.attempts.at(-1).event_id).toBe("e5000-o");
  }, 240_000);

  it("pages through every attempt, oldest page last, each once", async () => {
    const inv = await call(getInvocation, { key: t.key, params: { invocation_id: ID } });
    const seen = new Set<string>(inv.body.attempts.map((a: { event_id: string }) => a.event_id));
    let before: string | null = inv.body.attempts_earlier;
    let pages = 0;
    while (before) {
      const page = await call(attemptsRoute, {
        key: t.key,
        params: { invocation_id: ID },
        path: `/api/v1/invocations/${ID}/attempts?before=${encodeURIComponent(before)}&limit=500`,
      });
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(10_000);
      for (const a of page.body.items) {
        expect(seen.has(a.event_id)).toBe(false);
        seen.add(a.event_id);
      }
      before = page.body.earlier;
      pages += 1;
    }
    expect(seen.size).toBe(10_000);
    expect(pages).toBe(20); // 9,800 older ones, 500 a page
    const tampered = await call(attemptsRoute, {
      key: t.key,
      params: { invocation_id: ID },
      path: `/api/v1/invocations/${ID}/attempts?before=bm90LWEtY3Vyc29y`,
    });
    expect(tampered).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
  }, 120_000);

  it("the decision API answers for it as for any other", async () => {
    const req = new Request(`http://settle.test/api/v1/invocations/${ID}/decision`, {
      headers: { authorization: `Bearer ${t.key}` },
    });
    const res = await getDecision(req, { params: Promise.resolve({ invocation_id: ID }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      invocation_id: ID,
      status: "retry_scheduled",
      commit_state: "not_committed",
    });
  });
});
