import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { expectSettled, hostileNumber, hostileText, hostileValue } from "./fuzz-inputs";

// Hostile input against the retention routes: every answer is below 500 and typed, and a refused body stores
// nothing — the periods in effect stay the built-in ones and no change reaches the admin audit trail.

const putDefault = apiRoutes["/api/v1/retention"].PUT;
const putRuntime = apiRoutes["/api/v1/retention/runtimes/{runtime}"].PUT;
const resetRuntime = apiRoutes["/api/v1/retention/runtimes/{runtime}"].DELETE;
const getRetention = apiRoutes["/api/v1/retention"].GET;
const days = fc.oneof(hostileNumber, hostileText, hostileValue, fc.constant(null));

describe("hostile input to the retention routes", () => {
  let t: TestContext;
  let admin: string;

  beforeAll(async () => {
    t = await openSettle("postgres");
    admin = (await createOperator(t.db, "admin", "admin@example.com")).token;
  });
  afterAll(() => t?.teardown());

  it("answers every body and runtime name with a typed answer and stores nothing it refused", async () => {
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileValue, fc.record({ attempts_days: days, audit_days: days }, { requiredKeys: [] })),
        fc.oneof(hostileText, fc.constant(t.runtime)),
        async (body, runtime) => {
          const one = expectSettled("default", await call(putDefault, { method: "PUT", key: admin, body }));
          const own = expectSettled(
            "runtime",
            await call(putRuntime, { method: "PUT", key: admin, params: { runtime }, body }),
          );
          stored += [one, own].filter((r) => r.status === 200).length;
          const reset = await call(resetRuntime, { method: "DELETE", key: admin, params: { runtime } });
          expectSettled("reset", reset);
          if (reset.status === 200) stored += 1;
        },
      ),
      { numRuns: 150 },
    );
    const audit = await t.db.driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM admin_actions WHERE action = 'retention_changed'`,
    );
    expect(audit[0]!.n).toBe(stored);
    if (stored === 0) {
      const res = await call(getRetention, { key: admin });
      expect(res.body.default).toMatchObject({ attempts_days: 90, audit_days: 400, source: "built_in" });
    }
  });
});
