import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { argsDigest } from "@/lib/write/args-digest";
import { getMetrics, listMetricCases } from "@/lib/metrics/metrics";
import { putPolicy } from "@/lib/policies/policies";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, guard, ingest, otlpTraces, queue } from "./routes";

// Duplicates when the key changes (decision 028): the guard refuses a write
// under a new idempotency key whose arguments match an invocation that is
// committed, unknown or in flight; records that came without the guard (late
// envelopes, OTLP spans) are flagged after the fact and wait in the queue;
// operators confirm, dismiss, or say "not a duplicate".

const reviewDuplicate = apiRoutes["/api/v1/invocations/{invocation_id}/duplicate-review"].POST;
const notDuplicate = apiRoutes["/api/v1/invocations/{invocation_id}/not-duplicate"].POST;

const iso = (offsetS: number) => new Date(Date.now() + offsetS * 1000).toISOString();
const committed = { ok: true, commit_state: "committed" };

describe.each<Backend>(["postgres", "pglite"])("duplicates when the key changes on %s", (backend) => {
  let t: TestContext;
  let operator: string;
  let n = 0;
  const fresh = (what = "k") => `${what}${(n += 1)}-${backend}`;
  const ask = (body: Record<string, unknown>) => call(guard, { key: t.key, path: "/api/v1/guard", body });
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const send = async (records: object[]) => {
    const res = await call(ingest, { key: t.key, body: { records } });
    expect(res.status, JSON.stringify(res.body)).toBe(207);
    return res.body;
  };
  const checks = (key: string) =>
    t.db.prisma.guardCheck.findMany({
      where: { idempotencyKey: key },
      orderBy: { at: "asc" },
      select: { allow: true, reason: true, invocationId: true },
    });
  const queued = async () =>
    (await call(queue, { key: operator, path: "/api/v1/queue?limit=200" })).body.items as Array<{
      invocation_id: string;
      duplicate_review: string | null;
    }>;

  /** A refund written through the guard and committed: the earlier invocation. */
  async function committedRefund(args: Record<string, unknown>, tool = "create_refund") {
    const key = fresh();
    const first = await ask({
      task_id: "t-refund",
      tool,
      idempotency_key: key,
      effect_class: "money",
      arguments: { ...args, idempotency_key: key },
    });
    expect(first.body, JSON.stringify(first.body)).toMatchObject({ allow: true });
    const id = first.body.invocation_id as string;
    await send([
      {
        event_id: `${id}:outcome`,
        task_id: "t-refund",
        invocation_id: id,
        attempt: 1,
        tool,
        effect_class: "money",
        idempotency_key: key,
        at: iso(-1),
        envelope: committed,
      },
    ]);
    return { key, id };
  }

  beforeAll(async () => {
    t = await openSettle(backend);
    operator = (await createOperator(t.db, "operator")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("refuses the same refund under a new key as possible_duplicate, names the earlier invocation, and counts it as a duplicate prevented", async () => {
    const { id } = await committedRefund({ charge: "ch_1", amount: 50 });
    const key = fresh();
    const again = await ask({
      task_id: "t-refund",
      tool: "create_refund",
      idempotency_key: key,
      effect_class: "money",
      arguments: { amount: 50, charge: "ch_1", idempotency_key: key },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ allow: false, reason: "possible_duplicate", invocation_id: id, attempt: 1 });
    expect(await checks(key)).toEqual([{ allow: false, reason: "possible_duplicate", invocationId: id }]);
    // Nothing was written for the refused call.
    expect((await call(getInvocation, { key: t.key, params: { invocation_id: `t-refund:${key}` } })).status).toBe(404);
    // The earlier invocation's page lists the refusal, not yet cleared.
    expect((await read(id)).duplicate_refusals).toEqual([
      expect.objectContaining({ idempotency_key: key, task_id: "t-refund", refused: 1, cleared_by: null }),
    ]);
  });

  it("a changed volatile argument (nonce, timestamp, request id) is still the same call; args_digest alone is taken as given", async () => {
    const { id } = await committedRefund({ charge: "ch_2", amount: 20, nonce: "n-1", timestamp: iso(0) });
    const changed = await ask({
      task_id: "t-other",
      tool: "create_refund",
      idempotency_key: fresh(),
      effect_class: "money",
      arguments: { charge: "ch_2", amount: 20, nonce: "n-2", timestamp: iso(5), request_id: "r-9" },
    });
    expect(changed.body).toMatchObject({ allow: false, reason: "possible_duplicate", invocation_id: id });
    const byDigest = await ask({
      task_id: "t-other",
      tool: "create_refund",
      idempotency_key: fresh(),
      effect_class: "money",
      args_digest: argsDigest({ charge: "ch_2", amount: 20 }),
    });
    expect(byDigest.body).toMatchObject({ allow: false, reason: "possible_duplicate", invocation_id: id });
  });

  it("a changed amount is another call: allowed, and so is the same call of a class with no window (create) or of another tool", async () => {
    await committedRefund({ charge: "ch_3", amount: 30 });
    expect(
      (
        await ask({
          task_id: "t-refund",
          tool: "create_refund",
          idempotency_key: fresh(),
          effect_class: "money",
          arguments: { charge: "ch_3", amount: 31 },
        })
      ).body,
    ).toMatchObject({ allow: true });
    expect(
      (
        await ask({
          task_id: "t-refund",
          tool: "refund_again",
          idempotency_key: fresh(),
          effect_class: "money",
          arguments: { charge: "ch_3", amount: 30 },
        })
      ).body,
    ).toMatchObject({ allow: true });
    const created = fresh();
    expect(
      (
        await ask({
          task_id: "t-c",
          tool: "create_note",
          idempotency_key: created,
          effect_class: "create",
          arguments: { text: "hi" },
        })
      ).body,
    ).toMatchObject({ allow: true });
    expect(
      (
        await ask({
          task_id: "t-c",
          tool: "create_note",
          idempotency_key: fresh(),
          effect_class: "create",
          arguments: { text: "hi" },
        })
      ).body,
    ).toMatchObject({ allow: true });
  });

  it("refuses while the earlier write is still in flight, and allows once the earlier one is outside the window", async () => {
    const key = fresh();
    const first = await ask({
      task_id: "t-send",
      tool: "send_email",
      idempotency_key: key,
      effect_class: "send",
      arguments: { to: "a@example.com", subject: "Hi" },
    });
    expect(first.body.allow).toBe(true);
    expect(
      (
        await ask({
          task_id: "t-send",
          tool: "send_email",
          idempotency_key: fresh(),
          effect_class: "send",
          arguments: { to: "a@example.com", subject: "Hi" },
        })
      ).body,
    ).toMatchObject({
      allow: false,
      reason: "possible_duplicate",
      invocation_id: first.body.invocation_id,
    });
    // An hour for send: a committed email two hours ago is outside it.
    const old = fresh();
    const gone = await ask({
      task_id: "t-send",
      tool: "send_email",
      idempotency_key: old,
      effect_class: "send",
      arguments: { to: "b@example.com" },
      at: iso(-7200),
    });
    await send([
      {
        event_id: `${gone.body.invocation_id}:o`,
        task_id: "t-send",
        invocation_id: gone.body.invocation_id,
        attempt: 1,
        tool: "send_email",
        effect_class: "send",
        idempotency_key: old,
        at: iso(-7190),
        envelope: committed,
      },
    ]);
    expect(
      (
        await ask({
          task_id: "t-send",
          tool: "send_email",
          idempotency_key: fresh(),
          effect_class: "send",
          arguments: { to: "b@example.com" },
        })
      ).body,
    ).toMatchObject({ allow: true });
  });

  it("of concurrent writes of one call under ten new keys, exactly one is allowed (the digest's lock)", async () => {
    const args = { charge: "ch_race", amount: 10 };
    const keys = Array.from({ length: 10 }, () => fresh());
    const answers = await Promise.all(
      keys.map((key) =>
        ask({ task_id: "t-race", tool: "create_refund", idempotency_key: key, effect_class: "money", arguments: args }),
      ),
    );
    const allowed = answers.filter((a) => a.body.allow === true);
    expect(allowed).toHaveLength(1);
    expect(answers.filter((a) => a.body.reason === "possible_duplicate").map((a) => a.body.invocation_id)).toEqual(
      Array(9).fill(allowed[0]!.body.invocation_id),
    );
  });

  it("a policy sets the window: off for money, then the same refund under a new key is allowed", async () => {
    const { id } = await committedRefund({ charge: "ch_4", amount: 40 }, "refund_v2");
    const again = () =>
      ask({
        task_id: "t-refund",
        tool: "refund_v2",
        idempotency_key: fresh(),
        effect_class: "money",
        arguments: { charge: "ch_4", amount: 40 },
      });
    expect((await again()).body).toMatchObject({ allow: false, invocation_id: id });
    await putPolicy(
      t.db,
      "money",
      {
        overdue_after_s: null,
        escalate_after_s: null,
        approval_expires_after_s: null,
        approval_quorum: 1,
        duplicate_window_s: null,
      },
      "admin@example.com",
    );
    expect((await again()).body).toMatchObject({ allow: true });
    await putPolicy(
      t.db,
      "money",
      {
        overdue_after_s: null,
        escalate_after_s: null,
        approval_expires_after_s: null,
        approval_quorum: 1,
        duplicate_window_s: 86_400,
      },
      "admin@example.com",
    );
  });

  it("the catalog's volatile_args replace the default list for its tools", async () => {
    await addToolCatalogEntry(
      t.db,
      { runtime: t.runtime, pattern: "charge_*", effect_class: "money", volatile_args: ["memo"] },
      "admin@example.com",
    );
    const key = fresh();
    const first = await ask({
      task_id: "t-ch",
      tool: "charge_card",
      idempotency_key: key,
      arguments: { card: "c1", amount: 9, memo: "first try" },
    });
    expect(first.body.allow).toBe(true);
    // The memo is volatile for charge_*: still the same charge (money by the catalog, in flight).
    expect(
      (
        await ask({
          task_id: "t-ch",
          tool: "charge_card",
          idempotency_key: fresh(),
          arguments: { card: "c1", amount: 9, memo: "second try" },
        })
      ).body,
    ).toMatchObject({
      allow: false,
      reason: "possible_duplicate",
      invocation_id: first.body.invocation_id,
    });
    // A nonce is not volatile for it any more: another call.
    expect(
      (
        await ask({
          task_id: "t-ch",
          tool: "charge_card",
          idempotency_key: fresh(),
          arguments: { card: "c1", amount: 9, memo: "x", nonce: "n2" },
        })
      ).body,
    ).toMatchObject({ allow: true });
  });

  it("not a duplicate: an operator clears the refused key (audited) and the guard then allows it", async () => {
    const { id } = await committedRefund({ charge: "ch_5", amount: 55 });
    const key = fresh();
    const body = {
      task_id: "t-refund",
      tool: "create_refund",
      idempotency_key: key,
      effect_class: "money",
      arguments: { charge: "ch_5", amount: 55 },
    };
    expect((await ask(body)).body).toMatchObject({ allow: false, reason: "possible_duplicate", invocation_id: id });
    const viewer = (await createOperator(t.db, "viewer")).token;
    expect(
      (await call(notDuplicate, { key: viewer, params: { invocation_id: id }, body: { idempotency_key: key } })).status,
    ).toBe(403);
    const cleared = await call(notDuplicate, {
      key: operator,
      params: { invocation_id: id },
      body: { idempotency_key: key, note: "a second refund was asked for" },
    });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.duplicate_refusals).toEqual([
      expect.objectContaining({ idempotency_key: key, cleared_by: expect.stringContaining("operator-") }),
    ]);
    expect(cleared.body.actions.at(-1)).toMatchObject({
      action: "not_duplicate",
      note: expect.stringContaining(key),
      from_status: cleared.body.status,
      to_status: cleared.body.status,
    });
    expect(cleared.body.version).toBe((await read(id)).version);
    expect((await ask(body)).body).toMatchObject({ allow: true, invocation_id: `t-refund:${key}` });
    // Text PostgreSQL cannot store is cleaned, as the guard cleans the key it refused: never a 5xx.
    const hostile = await call(notDuplicate, {
      key: operator,
      params: { invocation_id: id },
      body: { idempotency_key: "k\u0000x", note: "bad \ud800 note" },
    });
    expect(hostile.status, JSON.stringify(hostile.body)).toBe(200);
    expect(hostile.body.duplicate_refusals.length).toBeGreaterThan(0);
    // Its own key is not a pair to clear.
    expect(
      (
        await call(notDuplicate, {
          key: operator,
          params: { invocation_id: id },
          body: { idempotency_key: (await read(id)).idempotency_key },
        })
      ).status,
    ).toBe(400);
  });

  it("stores arguments redacted, with Settle's digest; too large or not an object is the record's own rejection", async () => {
    const key = fresh();
    const args = { amount: 7, api_key: "sk_live_abcdefghijklmnop1234", card: { token: "tok_secret_value" } };
    const res = await ask({
      task_id: "t-r",
      tool: "pay",
      idempotency_key: key,
      effect_class: "money",
      arguments: args,
    });
    expect(res.body.allow).toBe(true);
    const inv = await read(res.body.invocation_id);
    expect(inv.args_digest).toBe(argsDigest(args));
    expect(inv.attempts[0].args_digest).toBe(argsDigest(args));
    expect(JSON.stringify(inv.attempts[0].arguments)).not.toContain("sk_live_abcdefghijklmnop1234");
    expect(JSON.stringify(inv.attempts[0].arguments)).not.toContain("tok_secret_value");
    expect(inv.attempts[0].arguments.amount).toBe(7);

    const big = { blob: "x".repeat(70_000) };
    const results = await send([
      { event_id: fresh("e"), task_id: "t-r", idempotency_key: fresh(), tool: "pay", phase: "intent", arguments: big },
      {
        event_id: fresh("e"),
        task_id: "t-r",
        idempotency_key: fresh(),
        tool: "pay",
        phase: "intent",
        arguments: ["not", "an", "object"],
      },
      {
        event_id: fresh("e"),
        task_id: "t-r",
        idempotency_key: fresh(),
        tool: "pay",
        phase: "intent",
        arguments: { password: "hunter2hunter2", to: "x" },
      },
    ]);
    expect(results.results.map((r: { status: string }) => r.status)).toEqual(["rejected", "rejected", "accepted"]);
    expect(results.results[0].error.code).toBe("INVALID_RECORD");
    const stored = await read(results.results[2].invocation_id);
    expect(stored.attempts[0].arguments).toMatchObject({ to: "x" });
    expect(JSON.stringify(stored.attempts[0].arguments)).not.toContain("hunter2hunter2");
    // Too large at the guard: refused whole, typed, nothing stored (the guard's body is smaller than the arguments may be).
    const tooBig = await ask({
      task_id: "t-r",
      tool: "pay",
      idempotency_key: fresh(),
      effect_class: "money",
      arguments: big,
    });
    expect([tooBig.status, tooBig.body.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
  });

  it("late envelope records under a new key are flagged possible_duplicate_of the committed one and wait in the queue; dismissing is audited and clears the key", async () => {
    const { id } = await committedRefund({ charge: "ch_6", amount: 60 });
    const key = fresh();
    const later = `late-${key}`;
    await send([
      {
        event_id: `${later}:i`,
        task_id: "t-late",
        invocation_id: later,
        attempt: 1,
        tool: "create_refund",
        effect_class: "money",
        idempotency_key: key,
        phase: "intent",
        at: iso(0),
        arguments: { charge: "ch_6", amount: 60, idempotency_key: key },
      },
      {
        event_id: `${later}:o`,
        task_id: "t-late",
        invocation_id: later,
        attempt: 1,
        tool: "create_refund",
        effect_class: "money",
        idempotency_key: key,
        at: iso(1),
        envelope: committed,
      },
    ]);
    const flagged = await read(later);
    expect(flagged).toMatchObject({ status: "succeeded", possible_duplicate_of: id, duplicate_review: "open" });
    expect(flagged.actions.at(-1)).toMatchObject({ action: "flag_possible_duplicate", actor: "system" });
    expect((await queued()).find((i) => i.invocation_id === later)).toMatchObject({ duplicate_review: "open" });

    // A different refund under another key is not flagged.
    const other = `late-${fresh()}`;
    await send([
      {
        event_id: `${other}:i`,
        task_id: "t-late",
        invocation_id: other,
        tool: "create_refund",
        effect_class: "money",
        idempotency_key: other,
        phase: "intent",
        arguments: { charge: "ch_6", amount: 61 },
      },
    ]);
    expect(await read(other)).toMatchObject({ possible_duplicate_of: null, duplicate_review: null });

    expect(
      (await call(reviewDuplicate, { key: operator, params: { invocation_id: other }, body: { verdict: "dismissed" } }))
        .status,
    ).toBe(409);
    const dismissed = await call(reviewDuplicate, {
      key: operator,
      params: { invocation_id: later },
      body: { verdict: "dismissed", note: "two refunds were due" },
    });
    expect(dismissed.status, JSON.stringify(dismissed.body)).toBe(200);
    expect(dismissed.body).toMatchObject({
      status: "succeeded",
      duplicate_review: "dismissed",
      possible_duplicate_of: id,
      version: flagged.version,
    });
    expect(dismissed.body.actions.at(-1)).toMatchObject({ action: "dismiss_duplicate", note: "two refunds were due" });
    expect((await queued()).some((i) => i.invocation_id === later)).toBe(false);
    expect(
      (
        await call(reviewDuplicate, {
          key: operator,
          params: { invocation_id: later },
          body: { verdict: "confirmed", note: "x" },
        })
      ).status,
    ).toBe(409);
    // Dismissed: the key is cleared against the earlier refund, so the guard lets its retry through.
    expect(
      (
        await ask({
          task_id: "t-late",
          tool: "create_refund",
          idempotency_key: key,
          effect_class: "money",
          arguments: { charge: "ch_6", amount: 60 },
        })
      ).body.reason,
    ).not.toBe("possible_duplicate");
  });

  it("two such calls in one batch at the same instant: only one is flagged, as the other's duplicate", async () => {
    const at = iso(-3);
    const [a, b] = [`same-${fresh()}`, `same-${fresh()}`];
    await send(
      [a, b].map((id) => ({
        event_id: `${id}:o`,
        task_id: "t-same",
        invocation_id: id,
        tool: "delete_file",
        effect_class: "destructive",
        idempotency_key: id,
        at,
        arguments: { path: "/tmp/x" },
        envelope: committed,
      })),
    );
    const flags = [(await read(a)).possible_duplicate_of, (await read(b)).possible_duplicate_of];
    expect(flags).toEqual(flags[0] === null ? [null, a] : [b, null]);
  });

  it("confirming a flagged duplicate needs a note and takes it out of the queue; a send is flagged, a create is not queued", async () => {
    const key = fresh();
    const first = `mail-${key}`;
    await send([
      {
        event_id: `${first}:o`,
        task_id: "t-m",
        invocation_id: first,
        tool: "send_email",
        effect_class: "send",
        idempotency_key: key,
        at: iso(-30),
        arguments: { to: "c@example.com" },
        envelope: committed,
      },
    ]);
    const second = `mail-${fresh()}`;
    await send([
      {
        event_id: `${second}:o`,
        task_id: "t-m",
        invocation_id: second,
        tool: "send_email",
        effect_class: "send",
        idempotency_key: second,
        at: iso(-10),
        arguments: { to: "c@example.com" },
        envelope: committed,
      },
    ]);
    expect(await read(second)).toMatchObject({ possible_duplicate_of: first, duplicate_review: "open" });
    expect(
      (
        await call(reviewDuplicate, {
          key: operator,
          params: { invocation_id: second },
          body: { verdict: "confirmed" },
        })
      ).status,
    ).toBe(400);
    const confirmed = await call(reviewDuplicate, {
      key: operator,
      params: { invocation_id: second },
      body: { verdict: "confirmed", note: "apologised to the customer" },
    });
    expect(confirmed.body).toMatchObject({ duplicate_review: "confirmed" });
    expect(confirmed.body.actions.at(-1)).toMatchObject({
      action: "confirm_duplicate",
      note: "apologised to the customer",
    });
    expect((await queued()).some((i) => i.invocation_id === second)).toBe(false);

    await putPolicy(
      t.db,
      "create",
      {
        overdue_after_s: null,
        escalate_after_s: null,
        approval_expires_after_s: null,
        approval_quorum: 1,
        duplicate_window_s: 3_600,
      },
      "admin@example.com",
    );
    const a = `note-${fresh()}`;
    const b = `note-${fresh()}`;
    await send([
      {
        event_id: `${a}:o`,
        task_id: "t-n",
        invocation_id: a,
        tool: "create_note",
        effect_class: "create",
        idempotency_key: a,
        at: iso(-5),
        arguments: { text: "x" },
        envelope: committed,
      },
    ]);
    await send([
      {
        event_id: `${b}:o`,
        task_id: "t-n",
        invocation_id: b,
        tool: "create_note",
        effect_class: "create",
        idempotency_key: b,
        at: iso(-1),
        arguments: { text: "x" },
        envelope: committed,
      },
    ]);
    // Flagged, but a second note is no effect to chase: not in the queue.
    expect(await read(b)).toMatchObject({ possible_duplicate_of: a, duplicate_review: null });
  });

  it("OTLP tool-call spans with the same arguments under other call ids: the later span's invocation is flagged", async () => {
    await addToolCatalogEntry(
      t.db,
      { runtime: t.runtime, pattern: "book_flight", effect_class: "money" },
      "admin@example.com",
    );
    const nanos = (offsetS: number) => `${BigInt(Date.now() + offsetS * 1000) * 1_000_000n}`;
    let spanSerial = 0;
    const span = (callId: string, args: object, startS: number) => {
      spanSerial += 1;
      return {
        traceId: `${backend === "postgres" ? "b1" : "c1"}`.repeat(16),
        spanId: (spanSerial + 0x2000).toString(16).padStart(16, "0"),
        name: "execute_tool book_flight",
        kind: 1,
        startTimeUnixNano: nanos(startS),
        endTimeUnixNano: nanos(startS + 1),
        attributes: [
          { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
          { key: "gen_ai.tool.name", value: { stringValue: "book_flight" } },
          { key: "gen_ai.tool.call.id", value: { stringValue: callId } },
          { key: "gen_ai.tool.call.arguments", value: { stringValue: JSON.stringify(args) } },
        ],
        status: { code: 1 },
      };
    };
    const exportOf = (spans: unknown[]) =>
      JSON.stringify({
        resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: "test" }, spans }] }],
      });
    const post = async (spans: unknown[]) => {
      const res = await call(otlpTraces, {
        key: t.key,
        path: "/v1/traces",
        raw: exportOf(spans),
        contentType: "application/json",
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    const first = `call-${fresh()}`;
    const second = `call-${fresh()}`;
    const third = `call-${fresh()}`;
    await post([span(first, { flight: "TP1", seat: "1A", request_id: "r1" }, -20)]);
    await post([
      span(second, { seat: "1A", flight: "TP1", request_id: "r2" }, -10),
      span(third, { flight: "TP1", seat: "2B" }, -9),
    ]);
    expect(await read(first)).toMatchObject({
      status: "succeeded",
      effect_class: "money",
      possible_duplicate_of: null,
    });
    const flagged = await read(second);
    expect(flagged).toMatchObject({ possible_duplicate_of: first, duplicate_review: "open" });
    expect(flagged.args_digest).toBe(argsDigest({ flight: "TP1", seat: "1A" }));
    expect(flagged.attempts.find((a: { phase: string }) => a.phase === "intent").arguments).toEqual({
      flight: "TP1",
      seat: "1A",
      request_id: "r2",
    });
    expect(await read(third)).toMatchObject({ possible_duplicate_of: null });
    expect((await queued()).find((i) => i.invocation_id === second)).toMatchObject({ duplicate_review: "open" });
  });

  it("metrics count the duplicates caught at the guard and after the fact, and open their cases", async () => {
    const query = { from: new Date(Date.now() - 7 * 86_400_000), to: new Date(Date.now() + 60_000) };
    const m = await getMetrics(t.db, { ...query, tool: undefined, runtime: undefined }, query.to, { rollups: false });
    const refused = await t.db.driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM guard_checks WHERE NOT allow AND reason = 'possible_duplicate'`,
    );
    const flagged = await t.db.driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM invocations WHERE possible_duplicate_of IS NOT NULL`,
    );
    expect(m.possible_duplicates).toEqual({ at_guard: refused[0]!.n, after_the_fact: flagged[0]!.n });
    expect(m.possible_duplicates.at_guard).toBeGreaterThan(3);
    expect(m.possible_duplicates.after_the_fact).toBeGreaterThan(1);
    const cases = await listMetricCases(
      t.db,
      {
        ...query,
        tool: undefined,
        runtime: undefined,
        metric: "possible_duplicates_after",
        limit: 100,
        cursor: undefined,
      },
      query.to,
    );
    expect(cases.items).toHaveLength(flagged[0]!.n);
    expect(cases.items[0]!.detail).toMatch(/^possible duplicate of /);
  });
});
