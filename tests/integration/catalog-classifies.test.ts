import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { recordVerifierProbe } from "@/lib/verify/probe";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, guard, ingest, otlpTraces } from "./routes";

// The tool catalog classifies every record that names no effect class, whatever the way in: envelopes, the
// guard's intent, OTLP spans, a verifier's answer (the MCP gateway sends its records through the first two).
// A record's own class still wins for that record; the invocation keeps the first class its records gave.

const iso = (offsetS: number) => new Date(Date.now() + offsetS * 1000).toISOString();
const timeout = { title: "Gateway Timeout", status: 504 };

describe.each<Backend>(["postgres", "pglite"])("the catalog classifies on %s", (backend) => {
  let t: TestContext;
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const send = async (records: object[]) => {
    const res = await call(ingest, { key: t.key, body: { records } });
    expect(res.body.rejected, JSON.stringify(res.body)).toBe(0);
  };

  beforeAll(async () => {
    t = await openSettle(backend);
    await addToolCatalogEntry(t.db, { runtime: t.runtime, pattern: "create_refund", effect_class: "money" }, "test");
    await addToolCatalogEntry(t.db, { runtime: t.runtime, pattern: "lookup_*", effect_class: "read" }, "test");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("an envelope without effect_class takes the catalog's class, and is read as that class", async () => {
    await send([
      { task_id: "t1", invocation_id: "refund-1", tool: "create_refund", at: iso(-5), envelope: timeout },
      { task_id: "t1", invocation_id: "lookup-1", tool: "lookup_order", at: iso(-5), envelope: timeout },
      { task_id: "t1", invocation_id: "other-1", tool: "send_mail", at: iso(-5), envelope: timeout },
    ]);
    const refund = await read("refund-1");
    expect(refund.effect_class).toBe("money");
    expect(refund.status).toBe("outcome_unknown");
    // A read that timed out did nothing: not committed, as a read it is (a write would be unknown).
    const lookup = await read("lookup-1");
    expect(lookup.effect_class).toBe("read");
    expect(lookup.commit_state).toBe("not_committed");
    // No entry: no class, treated as a write.
    expect((await read("other-1")).effect_class).toBe(null);
  });

  it("a record's own class wins over the catalog's", async () => {
    await send([
      {
        task_id: "t2",
        invocation_id: "refund-own",
        tool: "create_refund",
        effect_class: "create",
        at: iso(-5),
        envelope: timeout,
      },
    ]);
    expect((await read("refund-own")).effect_class).toBe("create");
  });

  it("the guard's intent takes the catalog's class when the request names none", async () => {
    const res = await call(guard, {
      key: t.key,
      path: "/api/v1/guard",
      body: { task_id: "t3", tool: "create_refund", idempotency_key: "refund-by-guard" },
    });
    expect(res.status).toBe(200);
    expect(res.body.allow).toBe(true);
    const inv = await read(res.body.invocation_id);
    expect(inv.effect_class).toBe("money");
  });

  it("an OTLP tool span takes the catalog's class", async () => {
    const res = await call(otlpTraces, {
      key: t.key,
      path: "/v1/traces",
      body: {
        resourceSpans: [
          {
            resource: { attributes: [{ key: "service.name", value: { stringValue: "agent" } }] },
            scopeSpans: [
              {
                scope: { name: "test" },
                spans: [
                  {
                    traceId: "5b8efff798038103d269b633813fc60c",
                    spanId: "eee19b7ec3c1b174",
                    name: "execute_tool create_refund",
                    kind: 1,
                    startTimeUnixNano: String(BigInt(Date.now() - 10_000) * 1_000_000n),
                    endTimeUnixNano: String(BigInt(Date.now() - 5_000) * 1_000_000n),
                    attributes: [
                      { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
                      { key: "gen_ai.tool.name", value: { stringValue: "create_refund" } },
                      { key: "gen_ai.tool.call.id", value: { stringValue: "call_classified_1" } },
                    ],
                    status: { code: 2, message: "upstream timed out" },
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    expect(res.status).toBe(200);
    const [row] = await t.db.driver.query<{ effect_class: string | null }>(
      `SELECT effect_class FROM invocations WHERE tool = 'create_refund' AND invocation_id LIKE '%call_classified_1%'`,
    );
    expect(row?.effect_class).toBe("money");
  });

  it("a verifier's answer about a call stored before its entry existed takes the entry's class", async () => {
    await send([{ task_id: "t5", invocation_id: "charge-1", tool: "charge_card", at: iso(-60), envelope: timeout }]);
    expect((await read("charge-1")).effect_class).toBe(null);
    await addToolCatalogEntry(t.db, { runtime: t.runtime, pattern: "charge_card", effect_class: "money" }, "test");
    const inv = await read("charge-1");
    const [runtime] = await t.db.driver.query<{ id: string }>(`SELECT id::text AS id FROM runtimes WHERE name = $1`, [
      t.runtime,
    ]);
    await recordVerifierProbe(
      t.db,
      {
        runtime_id: runtime!.id,
        runtime: t.runtime,
        invocation_id: "charge-1",
        task_id: "t5",
        tool: "charge_card",
        effect_class: null,
        idempotency_key: null,
        attempt: inv.attempts.at(-1)?.attempt ?? 1,
      },
      {
        settle_verification: { id: "00000000-0000-4000-8000-000000000001", try: 1, answered_by: "worker", via: "api" },
        found: true,
        evidence: "seen",
        ref: "ch_1",
      },
      "found",
      new Date(),
    );
    const after = await read("charge-1");
    expect(after.effect_class).toBe("money");
    expect(after.commit_state).toBe("committed");
  });
});
