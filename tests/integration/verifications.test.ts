import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { actOnInvocation } from "@/lib/invocations/act";
import { getMetrics, listMetricCases } from "@/lib/metrics/metrics";
import { answerVerification } from "@/lib/verify/answer";
import { storedStatusesOf } from "@/lib/outcome/status";
import { verifiableStatuses } from "@/lib/outcome/verification";
import { leaseRequests, selectRequests } from "@/lib/verify/queries";
import { recordVerifierProbe } from "@/lib/verify/probe";
import { reviewRequests, runVerifications, scheduleVerifications, VERIFIER_ACTOR } from "@/lib/verify/schedule";
import { apiRoutes } from "@/server/routes";
import { createSettleClient } from "@settle/client";
import { routeFetch } from "./route-fetch";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getDecision, getInvocation, ingest } from "./routes";

// Verifiers end to end on both databases: Settle schedules a request when a call of a tool with `verify` becomes
// unknown, opens it (the invocation is `verifying`), leases it to one worker, reads the answer as a probe, and
// hands back to a person what max_tries asks could not settle.

const takeWork = apiRoutes["/api/v1/verifications"].GET;
const answer = apiRoutes["/api/v1/verifications/{verification_id}"].POST;
const answerMany = apiRoutes["/api/v1/verifications"].POST;
const verificationOf = apiRoutes["/api/v1/invocations/{invocation_id}/verification"].GET;

const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();
const later = (s: number) => new Date(NOW.getTime() + s * 1000);
const verify = { after_s: 30, every_s: 60, max_tries: 3, absent_after_s: 120, lease_s: 30 };

const timeout = { title: "Gateway Timeout", status: 504 };
const unknownCall = (id: string, tool: string, atS: number) => ({
  event_id: `${id}-out`,
  task_id: `task-${id}`,
  invocation_id: id,
  attempt: 1,
  tool,
  effect_class: tool === "create_refund" ? "money" : "create",
  idempotency_key: `key-${id}`,
  arguments: { amount: 1200, currency: "EUR", charge: `ch_${id}` },
  at: ago(atS),
  envelope: timeout,
});

describe.each<Backend>(["postgres", "pglite"])("verifiers on %s", (backend) => {
  let t: TestContext;
  let otherKey: string;
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const decision = async (id: string) =>
    (await call(getDecision, { key: t.key, params: { invocation_id: id }, path: `/api/v1/invocations/${id}/decision` }))
      .body;
  const work = async (query = "", key = t.key) => call(takeWork, { key, path: `/api/v1/verifications${query}` });
  const send = (ids: string[], tool: string, atS: number) =>
    call(ingest, { key: t.key, body: { records: ids.map((id) => unknownCall(id, tool, atS)) } });

  beforeAll(async () => {
    t = await openSettle(backend);
    otherKey = (await createRuntimeKey(t.db, "rt-other")).key;
    for (const [pattern, effect_class, v] of [
      ["create_refund", "money", verify],
      ["create_*", "create", { ...verify, max_tries: 2 }],
      ["create_note", "create", null],
    ] as const) {
      await addToolCatalogEntry(t.db, { runtime: t.runtime, pattern, effect_class, verify: v }, "admin@example.com");
    }
  });
  afterAll(() => t.teardown());

  it("asks after after_s, leases each item to one worker, and settles on found", async () => {
    expect((await send(["f1"], "create_refund", 600)).body.accepted).toBe(1);
    expect((await send(["n1"], "create_note", 600)).body.accepted).toBe(1);
    const tick = await runVerifications(t.db, NOW);
    expect(tick).toMatchObject({ scheduled: 1, opened: 1 });
    expect((await read("f1")).status).toBe("verifying");
    expect((await decision("f1")).decision).toBe("verify");
    expect((await read("n1")).status).toBe("outcome_unknown");

    const first = await work("?worker=w1");
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(1);
    const item = first.body.items[0];
    expect(item).toMatchObject({
      invocation_id: "f1",
      task_id: "task-f1",
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: "key-f1",
      arguments: { amount: 1200, currency: "EUR", charge: "ch_f1" },
      first_dispatched_at: ago(600),
      try: 1,
      max_tries: 3,
    });
    // Leased: a second worker polling now gets nothing, and another runtime never sees it.
    expect((await work("?worker=w2")).body.items).toEqual([]);
    expect((await work("", otherKey)).body.items).toEqual([]);
    const foreign = await call(answer, { key: otherKey, params: { verification_id: item.id }, body: { found: true } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("NOT_FOUND");

    const settled = await call(answer, {
      key: t.key,
      params: { verification_id: item.id },
      body: { found: true, evidence: "GET /refunds?idempotency_key=key-f1 → re_123", ref: "re_123" },
    });
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ state: "settled", reading: "found", invocation_id: "f1" });
    const inv = await read("f1");
    expect(inv).toMatchObject({ status: "reconciled", commit_state: "committed" });
    expect((await decision("f1")).decision).toBe("do_not_retry");
    const probe = inv.attempts.find((a: { phase: string }) => a.phase === "probe");
    expect(probe.dialect).toBe("settle-verifier");
    expect(probe.agent_message).toContain("re_123");
    expect(inv.actions.map((a: { actor: string; action: string }) => [a.actor, a.action])).toContainEqual([
      VERIFIER_ACTOR,
      "request_verification",
    ]);

    const again = await call(answer, { key: t.key, params: { verification_id: item.id }, body: { found: false } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("VERIFICATION_CLOSED");
    const view = await call(verificationOf, { key: t.key, params: { invocation_id: "f1" } });
    expect(view.body).toMatchObject({ state: "settled", try: 1, max_tries: 3 });
    expect(view.body.answers[0]).toMatchObject({ found: true, ref: "re_123", by: "runtime:rt-test", via: "api" });
  });

  it("reads “not found” as not committed only once the first dispatch is absent_after_s old", async () => {
    await send(["a1"], "create_refund", 40);
    await runVerifications(t.db, NOW);
    const [item] = (await work()).body.items;
    expect(item.invocation_id).toBe("a1");
    const runtimeId = (await ownRuntimeId()).id;
    // Answered at NOW, not at the wall clock: on a loaded machine NOW is long past by now, and the next ask would
    // be every_s after the real time instead of when the first dispatch is absent_after_s old.
    const early = await answerVerification(t.db, { runtimeId, by: "w", via: "api" }, item.id, { found: false }, NOW);
    expect(early).toMatchObject({ state: "open", reading: "ask_again", next_ask_at: later(80).toISOString() });
    expect((await read("a1")).status).toBe("verifying");

    expect(await leaseRequests(t.db.driver, runtimeId, "w", later(79), 10)).toEqual([]);
    const asked = await leaseRequests(t.db.driver, runtimeId, "w", later(81), 10);
    expect(asked.map((r) => [r.id, r.tries])).toEqual([[item.id, 2]]);
    const late = await answerVerification(
      t.db,
      { runtimeId: asked[0]!.runtime_id, by: "w", via: "api" },
      item.id,
      { found: false },
      later(81),
    );
    expect(late).toMatchObject({ state: "settled", reading: "absent" });
    expect(await read("a1")).toMatchObject({ status: "reconciled", commit_state: "not_committed" });
    expect((await decision("a1")).decision).toBe("retry_allowed");
  });

  it("after max_tries asks without a settling answer, hands it to a person with what Settle saw", async () => {
    await send(["g1", "g2"], "create_invoice", 600);
    await runVerifications(t.db, NOW);
    const runtimeId = (await ownRuntimeId()).id;
    // g1: two answers that cannot tell; g2: leased twice and never answered.
    let at = NOW;
    for (let i = 1; i <= 2; i += 1) {
      const leased = await leaseRequests(t.db.driver, runtimeId, "w", at, 10);
      expect(leased.map((r) => r.tries)).toEqual([i, i]);
      const byInvocation = await requestsByInvocation(leased.map((r) => r.id));
      await answerVerification(
        t.db,
        { runtimeId, by: "w", via: "api" },
        byInvocation.get("g1")!,
        { found: null, evidence: "refunds API answered 503" },
        at,
      );
      at = new Date(at.getTime() + 61_000);
    }
    expect(await read("g1")).toMatchObject({ status: "escalated" });
    const g1 = await read("g1");
    const gaveUp = g1.attempts.filter((a: { phase: string }) => a.phase === "probe").at(-1);
    expect(gaveUp.agent_message).toBe(
      "Settle asked 2 times: no settling answer (last: the lookup could not tell: refunds API answered 503).",
    );
    expect((await read("g2")).status).toBe("verifying");
    const tick = await reviewRequests(t.db, new Date(at.getTime() + 31_000));
    expect(tick.gaveUp).toBe(1);
    const g2 = await read("g2");
    expect(g2.status).toBe("escalated");
    expect(g2.attempts.find((a: { phase: string }) => a.phase === "probe").agent_message).toBe(
      "Settle asked 2 times: no settling answer (last: no answer).",
    );
    expect((await work()).body.items).toEqual([]);
  });

  it("a person who settles first wins; a later contrary finding is an evidence conflict, not an overwrite", async () => {
    await send(["p1"], "create_refund", 600);
    await runVerifications(t.db, NOW);
    const [item] = (await work()).body.items;
    const inv = await read("p1");
    const acted = await actOnInvocation(
      t.db,
      { invocationId: "p1" },
      { action: "mark_reconciled", commit_state: "not_committed", note: "not in the dashboard" },
      { actor: "ops@example.com", version: inv.version },
    );
    expect(acted.ok).toBe(true);
    // The worker still holds the ask: the job leaves it to the answer, which closes it.
    expect((await reviewRequests(t.db, NOW)).cancelled).toBe(0);
    const late = await call(answer, {
      key: t.key,
      params: { verification_id: item.id },
      body: { found: true, ref: "re_9" },
    });
    expect(late.body).toMatchObject({ state: "cancelled", reading: "recorded" });
    const p1 = await read("p1");
    expect(p1.conflict).toBe(true);
    expect(p1).toMatchObject({
      status: "outcome_unknown",
      resolution: { by: "operator", commit_state: "not_committed" },
    });
    const closedView = await call(verificationOf, { key: t.key, params: { invocation_id: "p1" } });
    expect(closedView.body.state).toBe("cancelled");
    expect(closedView.body.answers.at(-1)).toMatchObject({ found: true, ref: "re_9", reading: "recorded" });
    const unclear = await call(answer, { key: t.key, params: { verification_id: item.id }, body: { found: null } });
    expect(unclear.status).toBe(409);
  });

  it("the job leaves a held ask to its answer: settled by the answer's own probe, it is not closed under it", async () => {
    await send(["h1"], "create_refund", 600);
    await runVerifications(t.db, NOW);
    const [item] = (await work("?worker=holder")).body.items;
    // What an answer does first: its probe settles the invocation; the job runs before the request moves on.
    const asked = (await selectRequests(t.db.driver, (await ownRuntimeId()).id, [item.id])).get(item.id)!;
    await recordVerifierProbe(
      t.db,
      asked,
      {
        settle_verification: { id: item.id, try: 1, answered_by: "runtime:rt-test", via: "api" },
        found: true,
        evidence: "re_h1",
        ref: null,
      },
      "found",
      new Date(),
    );
    expect((await read("h1")).status).toBe("reconciled");
    // At NOW the worker's lease (taken later, by the wall clock) still runs, however slow the machine was meanwhile.
    expect((await reviewRequests(t.db, NOW)).cancelled).toBe(0);
    // Once the lease has run out with no answer moving it on, the job closes it.
    expect((await reviewRequests(t.db, later(3_600))).cancelled).toBeGreaterThanOrEqual(1);
    const view = await call(verificationOf, { key: t.key, params: { invocation_id: "h1" } });
    expect(view.body.state).toBe("cancelled");
  });

  it("two workers polling at once never get the same item", async () => {
    await send(["c1", "c2", "c3"], "create_refund", 600);
    await runVerifications(t.db, NOW);
    const [a, b] = await Promise.all([work("?limit=2&worker=a"), work("?limit=2&worker=b")]);
    const ids = [...a.body.items, ...b.body.items].map((i: { id: string }) => i.id);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });

  it("metrics tell settled by the verifier from settled by a person, with the verifier's answer rate", async () => {
    const query = { from: new Date(NOW.getTime() - 3_600_000), to: later(3_600), tool: undefined, runtime: undefined };
    const m = await getMetrics(t.db, query, later(3_600), { rollups: false });
    // f1 found and a1 absent were settled by the verifier; p1 by a person (then re-opened by a contrary finding).
    expect(m.unknown_outcomes.resolved_by_verifier).toBe(2);
    expect(m.verifications).toMatchObject({ settled: 2, gave_up: 2 });
    expect(m.verifications.asks).toBeGreaterThanOrEqual(m.verifications.answers);
    expect(m.verifications.answer_rate).toBeGreaterThan(0);
    const cases = await listMetricCases(
      t.db,
      { ...query, metric: "resolved_by_verifier", limit: 100, cursor: undefined },
      later(3_600),
    );
    expect(cases.items.map((c) => c.invocation_id).sort()).toEqual(["a1", "f1"]);
  });

  it("@settle/client's worker loop settles a call through the real API", async () => {
    await send(["s1"], "create_refund", 600);
    await runVerifications(t.db, NOW);
    const client = createSettleClient({ url: "http://settle.test", key: t.key, fetch: routeFetch });
    const seen: string[] = [];
    client.verifier("create_refund", (item) => {
      seen.push(item.invocation_id);
      return { found: true, evidence: `refund for ${item.idempotency_key}`, ref: "re_s1" };
    });
    const controller = new AbortController();
    await client.serveVerifications({
      signal: controller.signal,
      waitS: 1,
      worker: "sdk",
      log: (e) => {
        if (e.kind === "answered") controller.abort();
      },
    });
    expect(seen).toEqual(["s1"]);
    expect(await read("s1")).toMatchObject({ status: "reconciled", commit_state: "committed" });
    const view = await call(verificationOf, { key: t.key, params: { invocation_id: "s1" } });
    expect(view.body.answers[0]).toMatchObject({ by: "runtime:rt-test", evidence: "refund for key-s1", ref: "re_s1" });
  });

  it("a worker takes a due ask before the job opens it, and opens it itself; one settled meanwhile is dropped", async () => {
    await send(["o1", "o2"], "create_refund", 600);
    await scheduleVerifications(t.db, NOW);
    const o2 = await read("o2");
    await actOnInvocation(
      t.db,
      { invocationId: "o2" },
      { action: "mark_reconciled", commit_state: "committed", note: "seen in the dashboard" },
      { actor: "ops@example.com", version: o2.version },
    );
    const taken = (await work("?limit=5")).body.items;
    expect(taken.map((i: { invocation_id: string }) => i.invocation_id)).toEqual(["o1"]);
    expect((await read("o1")).status).toBe("verifying");
    const o2Request = await call(verificationOf, { key: t.key, params: { invocation_id: "o2" } });
    expect(o2Request.body.state).toBe("cancelled");
  });

  it("takes several answers in one request, each taken or refused on its own, in the order sent", async () => {
    await send(["m1", "m2", "m3"], "create_refund", 600);
    await runVerifications(t.db, NOW);
    const items = (await work("?limit=5&worker=batch")).body.items as Array<{ id: string; invocation_id: string }>;
    const id = (inv: string) => items.find((i) => i.invocation_id === inv)!.id;
    const nobody = "00000000-0000-4000-8000-0000000000aa";
    const sent = await call(answerMany, {
      key: t.key,
      body: {
        answers: [
          { id: id("m1"), found: true, evidence: "re_m1 listed", ref: "re_m1" },
          { id: nobody, found: true },
          { id: id("m2"), found: false, evidence: "no refund with key-m2" },
          { id: id("m3"), found: null, evidence: "refunds API answered 503" },
          { id: id("m1"), found: false },
        ],
      },
    });
    expect(sent.status).toBe(200);
    expect(sent.body.results).toMatchObject([
      { id: id("m1"), state: "settled", reading: "found" },
      { id: nobody, error: { code: "NOT_FOUND" } },
      { id: id("m2"), state: "settled", reading: "absent" },
      { id: id("m3"), state: "open", reading: "ask_again" },
      { id: id("m1"), error: { code: "VERIFICATION_CLOSED" } },
    ]);
    expect(await read("m1")).toMatchObject({ status: "reconciled", commit_state: "committed" });
    expect(await read("m2")).toMatchObject({ commit_state: "not_committed" });
    expect((await read("m3")).status).toBe("verifying");
    // Another runtime's key answers nothing of this runtime's asks.
    const foreign = await call(answerMany, { key: otherKey, body: { answers: [{ id: id("m3"), found: true }] } });
    expect(foreign.body.results).toMatchObject([{ error: { code: "NOT_FOUND" } }]);
    expect((await read("m3")).status).toBe("verifying");
    const tooMany = await call(answerMany, {
      key: t.key,
      body: { answers: Array.from({ length: 101 }, () => ({ id: nobody, found: true })) },
    });
    expect(tooMany.status).toBe(400);
    expect((await call(answerMany, { key: t.key, body: { answers: [] } })).status).toBe(400);
  });

  it("the scheduler's index covers exactly the statuses a verifier is asked about", async () => {
    const [index] = await t.db.driver.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'invocations_verify_candidates_idx'`,
      [],
    );
    const named = [...index!.indexdef.matchAll(/'(\w+)'::text/g)].map((m) => m[1]).sort();
    expect(named).toEqual([...storedStatusesOf(verifiableStatuses)].sort());
  });

  it("answers 200 for a call Settle has not asked about, saying whether its tool has a verifier; 404 only for no call", async () => {
    await send(["nv1"], "create_note", 600);
    await send(["nv2"], "create_refund", 5);
    const view = async (id: string) => call(verificationOf, { key: t.key, params: { invocation_id: id } });
    const none = await view("nv1");
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ state: "none", verifier: false, note: expect.stringMatching(/no verifier/) });
    expect((await view("nv2")).body).toMatchObject({ state: "none", verifier: true });
    expect((await call(verificationOf, { key: otherKey, params: { invocation_id: "nv1" } })).status).toBe(404);
    expect((await view("no-such-call")).status).toBe(404);
  });

  it("refuses a bad finding and a bad id with typed errors", async () => {
    const bad = await call(answer, {
      key: t.key,
      params: { verification_id: "00000000-0000-4000-8000-000000000000" },
      body: { found: "yes", evidence: "x".repeat(5000) },
    });
    expect(bad.status).toBe(400);
    const missing = await call(answer, {
      key: t.key,
      params: { verification_id: "00000000-0000-4000-8000-000000000000" },
      body: { found: true },
    });
    expect(missing.status).toBe(404);
    const notUuid = await call(answer, { key: t.key, params: { verification_id: "nope" }, body: { found: true } });
    expect(notUuid.status).toBe(400);
    expect((await work("?wait=61")).status).toBe(400);
  });

  async function ownRuntimeId() {
    return (await t.db.prisma.runtime.findUniqueOrThrow({ where: { name: t.runtime } })) as { id: string };
  }
  async function requestsByInvocation(ids: string[]): Promise<Map<string, string>> {
    const rows = await t.db.driver.query<{ id: string; invocation_id: string }>(
      `SELECT v.id::text AS id, i.invocation_id FROM verification_requests v JOIN invocations i ON i.id = v.invocation_uid
        WHERE v.id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.invocation_id, r.id]));
  }
});
