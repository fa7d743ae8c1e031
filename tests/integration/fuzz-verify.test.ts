import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as catalogRoute from "@/app/api/v1/admin/tool-catalog/route";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { runVerifications } from "@/lib/verify/schedule";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { expectSettled, hostileNumber, hostileText, hostileValue } from "./fuzz-inputs";
import { getInvocation, ingest } from "./routes";

// Hostile input against what verifiers and call summaries added: the verification endpoints (a worker's poll, one
// answer, a batch of answers) and the catalog's summary and runbook fields. Every answer is below 500 and typed;
// a hostile answer settles nothing, and the asks a hostile poll takes stay asked.

const takeWork = apiRoutes["/api/v1/verifications"].GET;
const answerOne = apiRoutes["/api/v1/verifications/{verification_id}"].POST;
const answerMany = apiRoutes["/api/v1/verifications"].POST;
const field = fc.oneof(hostileText, hostileNumber, fc.constant(null), hostileValue);

describe("hostile input to verifications and call summaries", () => {
  let t: TestContext;
  let admin: string;

  beforeAll(async () => {
    t = await openSettle("postgres");
    admin = (await createOperator(t.db, "admin", "admin@example.com")).token;
    await addToolCatalogEntry(
      t.db,
      {
        runtime: t.runtime,
        pattern: "create_refund",
        effect_class: "money",
        verify: { after_s: 1, every_s: 60, max_tries: 5, absent_after_s: 1, lease_s: 30 },
        summary: "{{args.amount}} to {{args.customer}}",
      },
      "admin@example.com",
    );
    await call(ingest, {
      key: t.key,
      body: {
        records: [
          {
            event_id: "fz-out",
            task_id: "task-fz",
            invocation_id: "fz",
            tool: "create_refund",
            effect_class: "money",
            idempotency_key: "key-fz",
            arguments: { amount: 1, customer: "'; DROP TABLE invocations; --" },
            at: new Date(Date.now() - 600_000).toISOString(),
            envelope: { title: "Gateway Timeout", status: 504 },
          },
        ],
      },
    });
    await runVerifications(t.db, new Date());
  });
  afterAll(() => t?.teardown());

  it("polls, single answers and batches of answers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ wait: fc.option(field), limit: fc.option(field), worker: fc.option(field) }, { requiredKeys: [] }),
        field,
        fc.oneof(field, fc.record({ found: field, evidence: field, ref: field }, { requiredKeys: [] })),
        fc.oneof(
          field,
          fc.record({
            answers: fc.oneof(
              field,
              fc.array(fc.oneof(field, fc.record({ id: field, found: field, evidence: field })), { maxLength: 5 }),
            ),
          }),
        ),
        async (query, id, finding, batch) => {
          const search = new URLSearchParams(
            Object.entries(query).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
          );
          // wait=0 always: a hostile poll must not hold the test for a minute.
          search.set("wait", "0");
          expectSettled("poll", await call(takeWork, { key: t.key, path: `/api/v1/verifications?${search}` }));
          const verificationId = typeof id === "string" ? id : JSON.stringify(id);
          expectSettled(
            "answer",
            await call(answerOne, { key: t.key, params: { verification_id: verificationId }, body: finding }),
          );
          expectSettled("batch", await call(answerMany, { key: t.key, body: batch }));
        },
      ),
      { numRuns: 150 },
    );
    // Nothing hostile was a finding for the real ask: the call is still being checked, not settled.
    const inv = (await call(getInvocation, { key: t.key, params: { invocation_id: "fz" } })).body;
    expect(inv.commit_state).toBe("unknown");
    expect(inv.summary).toBe("1 to '; DROP TABLE invocations; --");
  });

  it("catalog summary and runbook fields", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ summary: field, runbook_url: field, runbook: field }, { requiredKeys: [] }),
        async (texts) => {
          n += 1;
          const res = expectSettled(
            "catalog",
            await call(catalogRoute.POST, {
              key: admin,
              path: "/api/v1/admin/tool-catalog",
              body: { runtime: t.runtime, pattern: `fuzz_${n}`, effect_class: "money", ...texts },
            }),
          );
          if (res.status === 201 && typeof res.body.runbook_url === "string")
            expect(res.body.runbook_url).toMatch(/^https?:\/\//i);
        },
      ),
      { numRuns: 150 },
    );
  });
});
