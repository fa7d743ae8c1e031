import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as queueRoute } from "@/app/api/v1/queue/route";
import { GET as queueIdsRoute } from "@/app/api/v1/queue/ids/route";
import { POST as bulkRoute } from "@/app/api/v1/bulk-actions/route";
import { GET as listViews, POST as saveViewRoute } from "@/app/api/v1/saved-views/route";
import { DELETE as deleteViewRoute } from "@/app/api/v1/saved-views/[id]/route";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { actOnInvocation } from "@/lib/invocations/act";
import { listQueue, listQueueTargets, queueFilterSchema, queueQuerySchema } from "@/lib/queue/queue";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";

// The queue: who is in it, in which order, every filter, keyset pages, the
// runtime scope, bulk actions with honest per-item results, saved views.

// Records are dated relative to the real clock, since the API reads the queue at the real time.
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();

const envelopes = {
  unknown: { ok: false, commit_state: "unknown", code: "UPSTREAM_TIMEOUT" },
  gateway: { title: "Gateway Timeout", status: 504 },
  partial: { ok: false, commit_state: "partial", code: "SOME_ROWS" },
  approval: {
    ok: false,
    commit_state: "not_committed",
    next_action: "request_approval",
    code: "APPROVAL_REQUIRED",
    category: "authorization",
  },
  escalate: { ok: false, commit_state: "unknown", next_action: "escalate", code: "PROVIDER_DOWN" },
  committed: { ok: true, commit_state: "committed" },
};

type Spec = {
  id: string;
  task?: string;
  tool?: string;
  cls?: string | null;
  at: number;
  envelope?: object;
  intent?: { budget: number };
  key?: string;
};

function record(s: Spec) {
  const base = {
    event_id: `${s.id}-${s.intent ? "i" : "o"}`,
    task_id: s.task ?? `task-${s.id}`,
    invocation_id: s.id,
    attempt: 1,
    tool: s.tool ?? "create_order",
    ...(s.cls === null ? {} : { effect_class: s.cls ?? "create" }),
    idempotency_key: s.key ?? `key-${s.id}`,
    at: ago(s.at),
  };
  return s.intent
    ? { ...base, phase: "intent", budget_left_s: s.intent.budget }
    : { ...base, envelope: s.envelope ?? envelopes.unknown };
}

describe.each<Backend>(["postgres", "pglite"])("the queue on %s", (backend) => {
  let t: TestContext;
  let otherKey: string;
  const send = async (key: string, specs: Spec[]) => {
    const res = await call(ingest, { key, body: { records: specs.map(record) } });
    expect(res.body.rejected).toBe(0);
  };
  const queue = (params: Record<string, string> = {}, now = NOW, me?: string) =>
    listQueue(t.db, queueQuerySchema.parse(params), { scope: {}, me, now });
  const ids = async (params: Record<string, string> = {}, now = NOW, me?: string) =>
    (await queue(params, now, me)).items.map((i) => i.invocation_id);
  const version = async (id: string, key = t.key) =>
    (await call(getInvocation, { key, params: { invocation_id: id } })).body.version as number;

  beforeAll(async () => {
    t = await openSettle(backend);
    otherKey = (await createRuntimeKey(t.db, "support-agent")).key;
    await send(t.key, [
      { id: "A-read", cls: "read", tool: "lookup_order", at: 100 },
      { id: "B-money", cls: "money", tool: "charge_card", at: 50, envelope: envelopes.gateway },
      { id: "C-stalled", cls: "create", at: 1000, intent: { budget: 60 } },
      { id: "D-escalated", cls: "money", tool: "charge_card", at: 2 * 3600, envelope: envelopes.escalate },
      { id: "E-approval", cls: "send", tool: "send_email", at: 3 * 3600, envelope: envelopes.approval },
      { id: "F-partial", cls: "destructive", tool: "delete_rows", at: 10, envelope: envelopes.partial },
      { id: "G-unclassified", cls: null, tool: "mystery_write", at: 500, key: "IDEM_100%_Sure" },
      { id: "H-money", cls: "money", tool: "charge_card", at: 200 },
      { id: "S-succeeded", cls: "create", at: 30, envelope: envelopes.committed },
      { id: "P-pending", cls: "create", at: 5, intent: { budget: 3600 } },
    ]);
    await send(otherKey, [{ id: "R2-unknown", task: "support-1", cls: "send", tool: "send_sms", at: 40 }]);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("holds everything that needs a person: unknown and stalled first, then money → destructive → send → create → read, oldest first", async () => {
    const page = await queue();
    expect(page.items.map((i) => i.invocation_id)).toEqual([
      "H-money",
      "B-money",
      "R2-unknown",
      "C-stalled",
      "G-unclassified",
      "A-read",
      "D-escalated",
      "F-partial",
      "E-approval",
    ]);
    expect(page.total).toBe(9);
    const stalled = page.items.find((i) => i.invocation_id === "C-stalled")!;
    expect(stalled).toMatchObject({
      status: "stalled",
      commit_state: "unknown",
      next_action: "verify_operation",
      status_since: ago(940),
    });
    expect(page.items.find((i) => i.invocation_id === "H-money")).toMatchObject({
      status: "outcome_unknown",
      commit_state: "unknown",
      tool: "charge_card",
      task_id: "task-H-money",
      effect_class: "money",
      attempt_count: 1,
      runtime: "rt-test",
      assignee: null,
      version: expect.any(Number),
    });
  });

  it("a stalled intent enters the queue the moment its window passes", async () => {
    await send(t.key, [{ id: "W-window", cls: "send", at: 30, intent: { budget: 600 } }]); // stall_at = NOW + 570 s
    expect(await ids({ status: "stalled" })).toEqual(["C-stalled"]);
    const later = new Date(NOW.getTime() + 570_000);
    expect(await ids({ status: "stalled" }, later)).toEqual(["W-window", "C-stalled"]); // send before create
    expect((await queue({}, later)).items.find((i) => i.invocation_id === "W-window")).toMatchObject({
      status: "stalled",
      status_since: later.toISOString(),
    });
    expect(await ids({ status: "stalled" }, new Date(later.getTime() - 1))).toEqual(["C-stalled"]);
  });

  it("filters by status, tool, runtime, effect class, assignee, age and free text", async () => {
    expect(await ids({ status: "escalated" })).toEqual(["D-escalated"]);
    expect(await ids({ status: "partially_applied,awaiting_approval" })).toEqual(["F-partial", "E-approval"]);
    // With settled ones included, an in-flight intent ranks with the headline by when it will stall; settled ones come last.
    expect(await ids({ status: "all" })).toEqual([
      "H-money",
      "B-money",
      "R2-unknown",
      "W-window",
      "C-stalled",
      "G-unclassified",
      "P-pending",
      "A-read",
      "D-escalated",
      "F-partial",
      "E-approval",
      "S-succeeded",
    ]);
    expect(await ids({ status: "pending" })).toEqual(["W-window", "P-pending"]);
    expect(await ids({ status: "succeeded" })).toEqual(["S-succeeded"]);
    expect(await ids({ tool: "charge_card" })).toEqual(["H-money", "B-money", "D-escalated"]);
    expect(await ids({ runtime: "support-agent" })).toEqual(["R2-unknown"]);
    expect(await ids({ runtime: "no-such-runtime" })).toEqual([]);
    expect(await ids({ effect_class: "money" })).toEqual(["H-money", "B-money", "D-escalated"]);
    expect(await ids({ effect_class: "unclassified,read" })).toEqual(["G-unclassified", "A-read"]);
    expect(await ids({ age: "1h" })).toEqual(["D-escalated", "E-approval"]);
    expect(await ids({ age: "150m" })).toEqual(["E-approval"]);
    expect(await ids({ q: "task-B" })).toEqual(["B-money"]);
    expect(await ids({ q: "F-part" })).toEqual(["F-partial"]);
    expect(await ids({ q: "f-part" })).toEqual([]); // identifiers are matched as written
    expect(await ids({ q: "100%_Sure" })).toEqual(["G-unclassified"]); // by idempotency key; % and _ are literal
    expect(await ids({ q: "0%" })).toEqual(["G-unclassified"]);
    expect(await ids({ q: "_" })).toEqual(["G-unclassified"]);
    // The trigram index reads the three ids joined by spaces; a q spanning two of them matches neither.
    expect(await ids({ q: "task-B-money B-money", status: "all" })).toEqual([]);
    const search = await t.db.prisma.$queryRawUnsafe<unknown[]>(
      `SELECT 1 FROM pg_indexes WHERE indexname = 'invocation_search_ids_trgm_idx'`,
    );
    expect(search).toHaveLength(1);
    expect(await ids({ effect_class: "money", age: "1h" })).toEqual(["D-escalated"]);

    const assigned = await actOnInvocation(
      t.db,
      { invocationId: "A-read" },
      { action: "assign", assignee: "ana@example.com" },
      { actor: "ana@example.com", version: await version("A-read") },
    );
    expect(assigned.ok).toBe(true);
    expect(await ids({ assignee: "ana@example.com" })).toEqual(["A-read"]);
    expect(await ids({ assignee: "me" }, NOW, "ana@example.com")).toEqual(["A-read"]);
    expect(await ids({ assignee: "me" }, NOW, "bo@example.com")).toEqual([]);
    expect(await ids({ assignee: "none" })).not.toContain("A-read");
    expect((await queue({ assignee: "none" })).total).toBe(8);
    expect((await queue({ effect_class: "money", limit: "1" })).total).toBe(3);
  });

  it("rejects filters it does not understand with the error envelope", async () => {
    const { token } = await createOperator(t.db, "viewer");
    for (const bad of ["status=happy", "effect_class=cheap", "age=soon", "limit=0", "cursor=nonsense"]) {
      const res = await call(queueRoute, { key: token, path: `/api/v1/queue?${bad}` });
      expect(res.status, bad).toBe(400);
      expect(res.body).toMatchObject({ ok: false, code: "INVALID_REQUEST" });
    }
    expect((await call(queueRoute, { key: t.key, path: "/api/v1/queue?assignee=me" })).status).toBe(400);
  });

  it("cursor pages never repeat or skip, ties included", async () => {
    // Forty more at the same instant in every class: the order is decided by id.
    const classes = ["money", "destructive", "send", "create", "read", null];
    await send(
      t.key,
      Array.from({ length: 40 }, (_, n) => ({ id: `tie-${n}`, cls: classes[n % classes.length]!, at: 777 })),
    );
    const whole = await ids({ limit: "200" });
    expect(whole).toHaveLength(49);
    expect(new Set(whole).size).toBe(49);
    for (const limit of [1, 7, 48]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        expect(seen.length, "a cursor that repeats never ends").toBeLessThanOrEqual(whole.length);
        const page = await queue({ limit: String(limit), ...(cursor ? { cursor } : {}) });
        expect(page.total).toBe(49);
        seen.push(...page.items.map((i) => i.invocation_id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual(whole);
    }
    const viaApi = await call(queueRoute, { key: t.key, path: "/api/v1/queue?limit=5&effect_class=money" });
    expect(viaApi.status).toBe(200);
    const next = await call(queueRoute, {
      key: t.key,
      path: `/api/v1/queue?limit=5&effect_class=money&cursor=${viaApi.body.next_cursor}`,
    });
    expect([...viaApi.body.items, ...next.body.items].map((i: { invocation_id: string }) => i.invocation_id)).toEqual(
      await ids({ effect_class: "money" }),
    );
  });

  it("a runtime key sees only its own runtime's queue; a person sees all", async () => {
    const own = await call(queueRoute, { key: otherKey, path: "/api/v1/queue" });
    expect(own.status).toBe(200);
    expect(own.body.items.map((i: { invocation_id: string }) => i.invocation_id)).toEqual(["R2-unknown"]);
    expect(own.body.total).toBe(1);
    const filtered = await call(queueRoute, { key: otherKey, path: "/api/v1/queue?runtime=rt-test" });
    expect(filtered.body).toMatchObject({ items: [], total: 0 });
    const { token } = await createOperator(t.db, "viewer");
    const person = await call(queueRoute, { key: token, path: "/api/v1/queue?limit=200" });
    expect(person.body.total).toBe(49);
    const targets = await call(queueIdsRoute, { key: otherKey, path: "/api/v1/queue/ids" });
    expect(targets.body).toMatchObject({
      items: [{ invocation_id: "R2-unknown", runtime: "support-agent", version: expect.any(Number) }],
      total: 1,
      truncated: false,
    });
  });

  it("select all matching a filter: every target with its version, in queue order", async () => {
    const { token } = await createOperator(t.db, "viewer");
    const res = await call(queueIdsRoute, { key: token, path: "/api/v1/queue/ids?effect_class=money" });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { invocation_id: string }) => i.invocation_id)).toEqual(
      await ids({ effect_class: "money" }),
    );
    const first = res.body.items[0].invocation_id;
    expect(res.body.items[0]).toEqual({ invocation_id: first, runtime: "rt-test", version: await version(first) });
    expect(res.body).toMatchObject({ total: res.body.items.length, truncated: false });
  });

  it("counts up to a cap, then says more than that; select all says how many it took", async () => {
    const capped = (params: Record<string, string>, count: number) =>
      listQueue(t.db, queueQuerySchema.parse(params), { scope: {}, now: NOW, limits: { count } });
    const exact = (await queue({ effect_class: "money" })).total;
    expect(exact).toBeGreaterThan(2);
    // A cap equal to the count is still exact; one below it is a lower bound.
    expect(await capped({ effect_class: "money" }, exact)).toMatchObject({ total: exact, total_capped: false });
    expect(await capped({ effect_class: "money" }, exact - 1)).toMatchObject({ total: exact - 1, total_capped: true });
    const all = await capped({ status: "all", q: "tie-", limit: "10" }, 5);
    expect(all).toMatchObject({ total: 5, total_capped: true });
    expect(all.items).toHaveLength(10);
    const api = await call(queueRoute, { key: t.key, path: "/api/v1/queue?effect_class=money" });
    expect(api.body).toMatchObject({ total: exact, total_capped: false });

    const targets = (count: number, max: number) =>
      listQueueTargets(t.db, queueFilterSchema.parse({ status: "all", q: "tie-" }), {
        scope: {},
        now: NOW,
        limits: { count, targets: max },
      });
    // Never fewer told than taken: the first 3 of more than 5, or all when they fit.
    expect(await targets(5, 3)).toMatchObject({
      items: expect.any(Array),
      total: 5,
      total_capped: true,
      truncated: true,
    });
    expect((await targets(5, 3)).items.map((i) => i.invocation_id)).toEqual(
      all.items.slice(0, 3).map((i) => i.invocation_id),
    );
    const every = await targets(1_000, 1_000);
    expect(every).toMatchObject({ total: every.items.length, total_capped: false, truncated: false });
    expect(every.items.length).toBeGreaterThan(5);
  });

  it("a bulk action applies item by item: one stale, one refused, the rest applied and audited", async () => {
    const { token } = await createOperator(t.db, "operator", `op-${backend}@example.com`);
    const stale = await version("tie-0");
    const moved = await actOnInvocation(
      t.db,
      { invocationId: "tie-0" },
      { action: "comment", note: "looking" },
      { actor: "bo@example.com", version: stale },
    );
    expect(moved.ok).toBe(true);
    const targets = await Promise.all(
      ["tie-1", "tie-0", "E-approval", "tie-2", "R2-unknown"].map(async (id) => ({
        invocation_id: id,
        runtime: id === "R2-unknown" ? "support-agent" : "rt-test",
        version: id === "tie-0" ? stale : await version(id, id === "R2-unknown" ? otherKey : t.key),
      })),
    );
    const res = await call(bulkRoute, {
      key: token,
      path: "/api/v1/bulk-actions",
      body: { action: "request_verification", note: "probe these", targets },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ succeeded: 3, refused: 2 });
    expect(res.body.results).toEqual([
      { invocation_id: "tie-1", runtime: "rt-test", ok: true, status: "verifying", version: expect.any(Number) },
      expect.objectContaining({
        invocation_id: "tie-0",
        ok: false,
        code: "VERSION_CONFLICT",
        status: "outcome_unknown",
        version: stale + 1,
        message: expect.stringMatching(/someone else changed/i),
      }),
      expect.objectContaining({
        invocation_id: "E-approval",
        ok: false,
        code: "TRANSITION_REFUSED",
        status: "awaiting_approval",
        message: expect.stringContaining("not allowed while the invocation is awaiting_approval"),
      }),
      { invocation_id: "tie-2", runtime: "rt-test", ok: true, status: "verifying", version: expect.any(Number) },
      {
        invocation_id: "R2-unknown",
        runtime: "support-agent",
        ok: true,
        status: "verifying",
        version: expect.any(Number),
      },
    ]);
    const audited = (await call(getInvocation, { key: t.key, params: { invocation_id: "tie-1" } })).body.actions;
    expect(audited).toEqual([
      expect.objectContaining({
        action: "request_verification",
        actor: `op-${backend}@example.com`,
        from_status: "outcome_unknown",
        to_status: "verifying",
        note: "probe these",
      }),
    ]);
    expect(
      (await call(getInvocation, { key: t.key, params: { invocation_id: "tie-0" } })).body.actions.map(
        (a: { action: string }) => a.action,
      ),
    ).toEqual(["comment"]);
    expect((await call(getInvocation, { key: t.key, params: { invocation_id: "E-approval" } })).body).toMatchObject({
      status: "awaiting_approval",
      actions: [],
    });
  });

  it("bulk requests: at most 100 targets, only the bulk actions, a person who may act", async () => {
    const { token } = await createOperator(t.db, "operator");
    const target = { invocation_id: "B-money", runtime: "rt-test", version: await version("B-money") };
    const tooMany = await call(bulkRoute, {
      key: token,
      path: "/api/v1/bulk-actions",
      body: { action: "comment", note: "x", targets: Array.from({ length: 101 }, () => target) },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ ok: false, code: "INVALID_REQUEST" });
    const settle = await call(bulkRoute, {
      key: token,
      path: "/api/v1/bulk-actions",
      body: { action: "mark_reconciled", commit_state: "committed", note: "all fine", targets: [target] },
    });
    expect(settle.status).toBe(400);
    expect(settle.body.agent_message).toMatch(/cannot be done in bulk/);
    const noReason = await call(bulkRoute, {
      key: token,
      path: "/api/v1/bulk-actions",
      body: { action: "escalate", targets: [target] },
    });
    expect(noReason.status).toBe(400);
    const viewer = await createOperator(t.db, "viewer");
    const refused = await call(bulkRoute, {
      key: viewer.token,
      path: "/api/v1/bulk-actions",
      body: { action: "comment", note: "hi", targets: [target] },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ ok: false, code: "FORBIDDEN" });
    expect(
      (
        await call(bulkRoute, {
          key: t.key,
          path: "/api/v1/bulk-actions",
          body: { action: "comment", note: "hi", targets: [target] },
        })
      ).status,
    ).toBe(403);
    expect(await version("B-money")).toBe(target.version);
    const unknownRuntime = await call(bulkRoute, {
      key: token,
      path: "/api/v1/bulk-actions",
      body: { action: "comment", note: "hi", targets: [{ ...target, runtime: "nope" }] },
    });
    expect(unknownRuntime.body).toMatchObject({
      succeeded: 0,
      refused: 1,
      results: [{ ok: false, code: "NOT_FOUND" }],
    });
  });

  it("saved views belong to one person", async () => {
    const ana = await createOperator(t.db, "viewer");
    const bo = await createOperator(t.db, "operator");
    const saved = await call(saveViewRoute, {
      key: ana.token,
      path: "/api/v1/saved-views",
      body: { name: "Money", query: "?effect_class=money&cursor=abc&limit=5&junk=1" },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ name: "Money", query: "effect_class=money", id: expect.any(String) });
    const again = await call(saveViewRoute, {
      key: ana.token,
      path: "/api/v1/saved-views",
      body: { name: "Money", query: "effect_class=money&age=1h" },
    });
    expect(again.body).toMatchObject({ id: saved.body.id, query: "effect_class=money&age=1h" });
    await call(saveViewRoute, {
      key: bo.token,
      path: "/api/v1/saved-views",
      body: { name: "Mine", query: "assignee=me" },
    });

    expect(
      (await call(listViews, { key: ana.token, path: "/api/v1/saved-views" })).body.items.map(
        (v: { name: string }) => v.name,
      ),
    ).toEqual(["Money"]);
    expect(
      (await call(listViews, { key: bo.token, path: "/api/v1/saved-views" })).body.items.map(
        (v: { name: string }) => v.name,
      ),
    ).toEqual(["Mine"]);
    const notYours = await call(deleteViewRoute, {
      method: "DELETE",
      key: bo.token,
      path: `/api/v1/saved-views/${saved.body.id}`,
      params: { id: saved.body.id },
    });
    expect(notYours.status).toBe(404);
    const mine = await call(deleteViewRoute, {
      method: "DELETE",
      key: ana.token,
      path: `/api/v1/saved-views/${saved.body.id}`,
      params: { id: saved.body.id },
    });
    expect(mine.status).toBe(200);
    expect((await call(listViews, { key: ana.token, path: "/api/v1/saved-views" })).body.items).toEqual([]);
    expect(
      (await call(saveViewRoute, { key: ana.token, path: "/api/v1/saved-views", body: { name: " ", query: "" } }))
        .status,
    ).toBe(400);
    expect((await call(listViews, { key: t.key, path: "/api/v1/saved-views" })).status).toBe(403);
  });

  it("search follows an idempotency key that arrives with a later record", async () => {
    const base = {
      task_id: "task-late",
      invocation_id: "L-late",
      tool: "create_order",
      effect_class: "create",
      attempt: 1,
    };
    const intent = await call(ingest, {
      key: t.key,
      body: { records: [{ ...base, event_id: "L-late-i", phase: "intent", budget_left_s: 3600, at: ago(20) }] },
    });
    expect(intent.body.rejected).toBe(0);
    expect(await ids({ q: "late-key", status: "all" })).toEqual([]);
    const outcome = await call(ingest, {
      key: t.key,
      body: {
        records: [
          { ...base, event_id: "L-late-o", idempotency_key: "late-key-1", at: ago(10), envelope: envelopes.committed },
        ],
      },
    });
    expect(outcome.body.rejected).toBe(0);
    expect(await ids({ q: "late-key", status: "all" })).toEqual(["L-late"]);
    expect(await ids({ q: "task-late", status: "all" })).toEqual(["L-late"]);
  });
});
