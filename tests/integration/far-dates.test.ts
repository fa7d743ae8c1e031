import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { runJobsOnce } from "@/lib/jobs/scheduler";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, guard, ingest } from "./routes";

// A caller's time outside what every reader of it can hold (docs/outcome-model.md §2: from 1970-01-01
// to the end of 8999, UTC) is refused with that record's own typed error, never stored to fail the
// readers after it (the duplicate check reads `at` minus a window, the stall time is `at` plus a
// budget), and never a line in the server's error log.

const FAR = [
  "0000-12-31T00:00:00Z",
  "0001-01-01T00:00:00Z",
  "0001-03-01T00:00:00Z",
  "1969-12-31T23:59:59.999Z",
  "9000-01-01T00:00:00Z",
  "9999-12-31T00:00:00Z",
];
const EDGES = ["1970-01-01T00:00:00.000Z", "8999-12-31T23:59:59.999Z"];

describe.each<Backend>(["postgres", "pglite"])("far dates on %s", (backend) => {
  let t: TestContext;
  const errors = vi.spyOn(console, "error");
  beforeAll(async () => {
    t = await openSettle(backend);
  });
  afterEach(() => errors.mockClear());
  afterAll(async () => {
    errors.mockRestore();
    await t?.teardown();
  });

  // Arguments, a money class (its duplicate window is on) and a year's budget: every reader of `at` runs.
  const record = (n: string, at: string) => ({
    event_id: `far-${n}`,
    task_id: "far",
    invocation_id: `far-${n}`,
    tool: "charge_card",
    effect_class: "money",
    phase: "intent",
    at,
    budget_left_s: 31_536_000,
    arguments: { amount: 5, to: "acct-1" },
  });

  it("refuses each record dated outside the range, typed, and stores its neighbours", async () => {
    const records = [...FAR.map((at, i) => record(`out-${i}`, at)), ...EDGES.map((at, i) => record(`edge-${i}`, at))];
    const res = await call(ingest, { key: t.key, body: { records } });
    expect(res.status).toBe(207);
    const statuses = res.body.results.map((r: { status: string }) => r.status);
    expect(statuses).toEqual([...FAR.map(() => "rejected"), ...EDGES.map(() => "accepted")]);
    for (const r of res.body.results.slice(0, FAR.length)) {
      expect(r.error).toMatchObject({ code: "INVALID_TIMESTAMP", commit_state: "not_committed" });
      expect(r.error.agent_message).toContain("1970-01-01");
      expect(r.error.agent_message).toContain("8999-12-31");
    }
    for (const [i] of EDGES.entries()) {
      const read = await call(getInvocation, { key: t.key, params: { invocation_id: `far-edge-${i}` } });
      expect(read.status).toBe(200);
    }
    // A later record of the same call and arguments runs the duplicate check over what was stored.
    const later = await call(ingest, { key: t.key, body: { ...record("later", "2026-12-01T00:00:00Z") } });
    expect(later.body.results[0].status).toBe("accepted");
    await runJobsOnce(t.db, new Date());
    expect(errors).not.toHaveBeenCalled();
  });

  it("refuses the guard's `at` outside the range with a typed 400, and logs nothing", async () => {
    for (const [i, at] of FAR.entries()) {
      const res = await call(guard, {
        key: t.key,
        body: { task_id: "far-guard", tool: "charge_card", idempotency_key: `g-${i}`, at, arguments: { amount: i } },
      });
      expect(res.status, at).toBe(400);
      expect(res.body.code).toBe("INVALID_REQUEST");
      expect(res.body.agent_message).toContain("8999-12-31");
    }
    expect(errors).not.toHaveBeenCalled();
  });
});
