import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as catalogRoute from "@/app/api/v1/admin/tool-catalog/route";
import * as entryRoute from "@/app/api/v1/admin/tool-catalog/[entry_id]/route";
import { eventFor } from "@/lib/webhooks/events";
import { actOnInvocation } from "@/lib/invocations/act";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, guard, ingest, otlpTraces, queue } from "./routes";
import * as argumentsReview from "@/app/api/v1/invocations/[invocation_id]/arguments-review/route";

// What the call was: a catalog entry's summary template (else the first few scalar arguments) gives each call
// one line, at ingest, on every path (native, guard, OTLP), from the arguments as stored (secrets redacted); the
// invocation, the queue and webhook events carry it. Where to check it: the entry's runbook link and steps.

const path = "/api/v1/admin/tool-catalog";
const timeout = { title: "Gateway Timeout", status: 504 };

describe.each<Backend>(["postgres", "pglite"])("call summaries on %s", (backend) => {
  let t: TestContext;
  let admin: string;
  const read = async (id: string) => (await call(getInvocation, { key: t.key, params: { invocation_id: id } })).body;
  const unknown = (id: string, tool: string, args: object | undefined) => ({
    event_id: `${id}-out`,
    task_id: `task-${id}`,
    invocation_id: id,
    tool,
    effect_class: "money",
    idempotency_key: `key/${id}`,
    ...(args ? { arguments: args } : {}),
    envelope: timeout,
  });

  beforeAll(async () => {
    t = await openSettle(backend);
    admin = (await createOperator(t.db, "admin", "admin@example.com")).token;
    const entry = await call(catalogRoute.POST, {
      key: admin,
      path,
      body: {
        runtime: t.runtime,
        pattern: "create_refund",
        effect_class: "money",
        summary: "{{args.amount}} {{args.currency}} to {{args.customer}} ({{args.card.card_number}})",
        runbook_url: "https://dashboard.example.com/refunds?q={{idempotency_key}}",
        runbook: "Search the refunds list by the key; a refund there means it happened.",
      },
    });
    expect(entry.status, JSON.stringify(entry.body)).toBe(201);
    expect(entry.body).toMatchObject({
      summary: "{{args.amount}} {{args.currency}} to {{args.customer}} ({{args.card.card_number}})",
      runbook_url: "https://dashboard.example.com/refunds?q={{idempotency_key}}",
    });
  });
  afterAll(() => t.teardown());

  it("fills the template from the stored arguments, secrets redacted, and keeps the latest", async () => {
    const args = { amount: 1200, currency: "EUR", customer: "cus_9", card: { card_number: "4242424242424242" } };
    const res = await call(ingest, { key: t.key, body: { records: [unknown("r1", "create_refund", args)] } });
    expect(res.body.accepted).toBe(1);
    const inv = await read("r1");
    expect(inv.summary).toMatch(/^1200 EUR to cus_9 \((?!4242424242424242).+\)$/);
    expect(inv.summary).not.toContain("4242424242424242");

    await call(ingest, {
      key: t.key,
      body: {
        records: [{ ...unknown("r1", "create_refund", { ...args, amount: 900 }), event_id: "r1-out-2", attempt: 2 }],
      },
    });
    expect((await read("r1")).summary).toMatch(/^900 EUR to cus_9/);
    // A record without arguments leaves the summary as it was.
    await call(ingest, {
      key: t.key,
      body: { records: [{ ...unknown("r1", "create_refund", undefined), event_id: "r1-3" }] },
    });
    expect((await read("r1")).summary).toMatch(/^900 EUR/);
  });

  it("without a template: the first few scalar arguments; without arguments: none", async () => {
    await call(ingest, {
      key: t.key,
      body: {
        records: [
          unknown("n1", "send_email", {
            to: "ops@example.com",
            subject: "Refund done",
            body: { html: "<p>" },
            draft: false,
          }),
          unknown("n2", "send_email", undefined),
        ],
      },
    });
    expect((await read("n1")).summary).toBe("to ops@example.com · subject Refund done · draft false");
    expect((await read("n2")).summary).toBeNull();
  });

  it("the guard's intent and an OTLP span get one too; the queue carries it on every row", async () => {
    const allowed = await call(guard, {
      key: t.key,
      body: {
        task_id: "task-g1",
        tool: "create_refund",
        idempotency_key: "key-g1",
        effect_class: "money",
        arguments: { amount: 5, currency: "USD", customer: "cus_1" },
      },
    });
    expect(allowed.body.allow).toBe(true);
    expect((await read(allowed.body.invocation_id)).summary).toBe("5 USD to cus_1 (?)");

    const nanos = (s: number) => `${BigInt(Date.now() + s * 1000) * 1_000_000n}`;
    const span = {
      traceId: (backend === "postgres" ? "d1" : "e1").repeat(16),
      spanId: "00000000000000a1",
      name: "execute_tool create_refund",
      kind: 1,
      startTimeUnixNano: nanos(-5),
      endTimeUnixNano: nanos(-4),
      attributes: [
        { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
        { key: "gen_ai.tool.name", value: { stringValue: "create_refund" } },
        { key: "gen_ai.tool.call.id", value: { stringValue: "call-o1" } },
        {
          key: "gen_ai.tool.call.arguments",
          value: { stringValue: JSON.stringify({ amount: 7, currency: "GBP", customer: "cus_7" }) },
        },
      ],
      status: { code: 2, message: "timeout" },
    };
    const sent = await call(otlpTraces, {
      key: t.key,
      path: "/v1/traces",
      raw: JSON.stringify({
        resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: "t" }, spans: [span] }] }],
      }),
      contentType: "application/json",
    });
    expect(sent.status).toBe(200);
    const otlp = await t.db.driver.query<{ summary: string | null }>(
      `SELECT summary FROM invocations WHERE tool = 'create_refund' AND summary LIKE '7 GBP%'`,
      [],
    );
    expect(otlp.map((r) => r.summary)).toEqual(["7 GBP to cus_7 (?)"]);

    const items = (await call(queue, { key: admin, path: "/api/v1/queue?limit=100" })).body.items as Array<{
      invocation_id: string;
      summary: string | null;
    }>;
    expect(items.find((i) => i.invocation_id === "r1")?.summary).toMatch(/^900 EUR to cus_9/);
    expect(items.find((i) => i.invocation_id === "n2")?.summary).toBeNull();
  });

  it("an approval is bound to the arguments approved: a later record with others is flagged", async () => {
    const args = { amount: 50, currency: "EUR", customer: "cus_2" };
    const asked = (id: string, a: object, extra: object = {}) => ({
      event_id: `${id}-ask`,
      task_id: `task-${id}`,
      invocation_id: id,
      tool: "create_refund",
      effect_class: "money",
      idempotency_key: `key-${id}`,
      arguments: a,
      envelope: { ok: false, commit_state: "not_committed", next_action: "request_approval" },
      ...extra,
    });
    const ran = (id: string, a: object) => ({
      event_id: `${id}-ran`,
      task_id: `task-${id}`,
      invocation_id: id,
      attempt: 2,
      tool: "create_refund",
      idempotency_key: `key-${id}`,
      arguments: a,
      envelope: { ok: true, commit_state: "committed" },
    });
    await call(ingest, { key: t.key, body: { records: [asked("ap1", args), asked("ap2", args)] } });
    for (const id of ["ap1", "ap2"]) {
      const before = await read(id);
      expect(before).toMatchObject({ status: "awaiting_approval", ran_with_other_arguments: false });
      await actOnInvocation(
        t.db,
        { invocationId: id },
        { action: "approve" },
        { actor: "ana@example.com", version: before.version },
      );
    }
    // The same arguments in another key order: the same call. Another amount: flagged.
    await call(ingest, {
      key: t.key,
      body: {
        records: [
          ran("ap1", { customer: "cus_2", currency: "EUR", amount: 50 }),
          ran("ap2", { ...args, amount: 5000 }),
        ],
      },
    });
    expect(await read("ap1")).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_review: null,
    });
    expect(await read("ap2")).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: true,
      arguments_review: "open",
    });
    // Succeeded, yet in the queue with the flag until a person checks what ran; ap1 is not.
    const queued = async () =>
      (await call(queue, { key: admin, path: "/api/v1/queue?limit=200" })).body.items as Array<{
        invocation_id: string;
        ran_with_other_arguments: boolean;
      }>;
    expect((await queued()).find((i) => i.invocation_id === "ap2")).toMatchObject({ ran_with_other_arguments: true });
    expect((await queued()).some((i) => i.invocation_id === "ap1")).toBe(false);

    const path = "/api/v1/invocations/ap2/arguments-review";
    const noNote = await call(argumentsReview.POST, {
      key: admin,
      path,
      params: { invocation_id: "ap2" },
      body: { note: " " },
    });
    expect(noNote.status).toBe(400);
    const checked = await call(argumentsReview.POST, {
      key: admin,
      path,
      params: { invocation_id: "ap2" },
      body: { note: "5000 EUR went out; refunded 4950 in the dashboard" },
    });
    expect(checked.status).toBe(200);
    expect(checked.body).toMatchObject({
      status: "succeeded",
      version: (await read("ap2")).version,
      arguments_review: "checked",
    });
    expect(checked.body.actions.at(-1)).toMatchObject({
      action: "check_arguments",
      note: "5000 EUR went out; refunded 4950 in the dashboard",
    });
    expect((await queued()).some((i) => i.invocation_id === "ap2")).toBe(false);
    const again = await call(argumentsReview.POST, {
      key: admin,
      path,
      params: { invocation_id: "ap2" },
      body: { note: "again" },
    });
    expect(again.status).toBe(409);
    const nothing = await call(argumentsReview.POST, {
      key: admin,
      path: "/api/v1/invocations/ap1/arguments-review",
      params: { invocation_id: "ap1" },
      body: { note: "nothing to see" },
    });
    expect(nothing.status).toBe(409);
    // The check changes no state: a later record folds as before, and the check stays.
    await call(ingest, {
      key: t.key,
      body: { records: [{ ...ran("ap2", { ...args, amount: 5000 }), event_id: "ap2-again" }] },
    });
    expect(await read("ap2")).toMatchObject({ status: "succeeded", arguments_review: "checked" });
  });

  it("webhook events carry the summary", async () => {
    const event = eventFor(
      {
        id: "1",
        invocationUid: "00000000-0000-4000-8000-000000000001",
        status: "reconciled",
        commitState: "committed",
        resolutionBy: "operator",
        notBefore: null,
        version: 2,
        at: new Date(),
        fromStatus: "outcome_unknown",
        previous: { commitState: "unknown", resolutionBy: null, notBefore: null },
        actor: "ops@example.com",
        invocationId: "r1",
        taskId: "task-r1",
        tool: "create_refund",
        effectClass: "money",
        idempotencyKey: "key/r1",
        summary: "900 EUR to cus_9",
        runtime: t.runtime,
      },
      new Date(),
    );
    expect(event?.data.summary).toBe("900 EUR to cus_9");
  });

  it("refuses a template with an unknown placeholder and a runbook link that is not http(s) or moves the host", async () => {
    for (const body of [
      { summary: "{{password}}" },
      { summary: "x".repeat(201) },
      { runbook_url: "javascript:alert(1)" },
      { runbook_url: "https://{{args.host}}/refunds" },
      { runbook_url: "ftp://files.example.com/{{tool}}" },
    ]) {
      const res = await call(catalogRoute.POST, {
        key: admin,
        path,
        body: { runtime: t.runtime, pattern: `tool_${Object.keys(body)[0]}`, effect_class: "money", ...body },
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const list = await call(catalogRoute.GET, { key: admin, path: `${path}?runtime=${t.runtime}` });
    const id = list.body.items.find((e: { pattern: string }) => e.pattern === "create_refund").id;
    const cleared = await call(entryRoute.PATCH, {
      method: "PATCH",
      key: admin,
      params: { entry_id: id },
      body: { runbook: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      runbook: null,
      runbook_url: "https://dashboard.example.com/refunds?q={{idempotency_key}}",
    });
  });
});
