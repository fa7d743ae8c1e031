import { createHash } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api } from "@/components/api";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { actOnInvocation } from "@/lib/invocations/act";
import { parseExactJson } from "@/lib/json/exact";
import { runVerifications } from "@/lib/verify/schedule";
import { apiRoutes } from "@/server/routes";
import { createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { routeFetch } from "./route-fetch";

// Issue 36: an integer above 2^53 in a call's arguments reached the approver rounded
// (12345678901234567890 read back as 12345678901234567000), and two calls that differed only in those
// digits shared one digest, so an approval of one matched a run of the other. Every way in (envelopes,
// the guard, OTLP) keeps the digits, the digest reads them, and every read endpoint answers them.

type Handler = (req: Request, ctx?: { params: Promise<Record<string, string>> }) => Promise<Response>;
const route = (path: keyof typeof apiRoutes, method: "GET" | "POST") =>
  (apiRoutes[path] as unknown as Record<string, Handler>)[method]!;
const ingest = route("/api/v1/envelopes", "POST");
const guard = route("/api/v1/guard", "POST");
const otlp = route("/v1/traces", "POST");

/** A request with the body's text as written (no JSON.stringify in between), its answer read exactly. */
async function send(
  handler: Handler,
  o: { key: string; text?: string; params?: Record<string, string>; path?: string },
): Promise<{ status: number; text: string; body: any }> {
  const req = new Request(`http://settle.test${o.path ?? "/x"}`, {
    method: o.text === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${o.key}`,
      ...(o.text === undefined ? {} : { "content-type": "application/json" }),
    },
    body: o.text,
  });
  const res = await handler(req, { params: Promise.resolve(o.params ?? {}) });
  const text = await res.text();
  return { status: res.status, text, body: parseExactJson(text) };
}

const digestOf = (canonical: string) => `sha256:${createHash("sha256").update(canonical).digest("hex")}`;
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const verify = { after_s: 30, every_s: 60, max_tries: 5, absent_after_s: 120, lease_s: 30 };

const ARGS =
  '{"order": 12345678901234567890, "amount": 1200, "lines": [{"sku": -18446744073709551617, "qty": 2}], "ref": "12345678901234567890"}';
// Canonical JSON (keys sorted, no spaces) with every digit, as the clients and docs/api.md write it.
const CANONICAL =
  '{"amount":1200,"lines":[{"qty":2,"sku":-18446744073709551617}],"order":12345678901234567890,"ref":"12345678901234567890"}';

describe.each<Backend>(["postgres", "pglite"])("integers past 2^53 keep their digits (%s)", (backend) => {
  let t: TestContext;
  let viewer: string;
  beforeAll(async () => {
    t = await openSettle(backend);
    viewer = (await createOperator(t.db, "viewer")).token;
    await addToolCatalogEntry(
      t.db,
      { runtime: t.runtime, pattern: "ship_order", effect_class: "create", verify },
      "a@x",
    );
  });
  afterAll(async () => {
    await t?.teardown();
  });

  const read = async (id: string, key = t.key) =>
    send(route("/api/v1/invocations/{invocation_id}", "GET"), { key, params: { invocation_id: id } });

  it("from an envelope record, through every read endpoint, into the digest", async () => {
    const record = `{"event_id": "li-1-out", "task_id": "task-li-1", "invocation_id": "li-1", "tool": "ship_order",
      "idempotency_key": "key-li-1", "at": "${new Date(NOW.getTime() - 600_000).toISOString()}", "arguments": ${ARGS},
      "envelope": {"title": "Gateway Timeout", "status": 504, "detail": "shipment 98765432109876543210 timed out", "shipment": 98765432109876543210}}`;
    const stored = await send(ingest, { key: t.key, text: `{"records": [${record}]}` });
    expect(stored.status).toBe(207);
    expect(stored.body.results[0].status).toBe("accepted");

    const inv = await read("li-1");
    expect(inv.status).toBe(200);
    expect(inv.body.args_digest).toBe(digestOf(CANONICAL));
    expect(inv.body.args_digest).not.toBe(
      digestOf(CANONICAL.replace("12345678901234567890,", "12345678901234567000,")),
    );
    const attempt = inv.body.attempts[0];
    expect(attempt.arguments.order).toBe(12345678901234567890n);
    expect(attempt.arguments.lines[0].sku).toBe(-18446744073709551617n);
    expect(attempt.arguments.ref).toBe("12345678901234567890");
    expect(attempt.envelope.shipment).toBe(98765432109876543210n);
    expect(inv.text).toContain('"order":12345678901234567890');
    // The automatic summary shows the digits on every queue row, Slack and email.
    expect(inv.body.summary).toContain("order 12345678901234567890");

    const seen = [
      inv.text,
      (await read("li-1", viewer)).text,
      (
        await send(route("/api/v1/invocations/{invocation_id}/attempts", "GET"), {
          key: t.key,
          params: { invocation_id: "li-1" },
        })
      ).text,
      (await send(route("/api/v1/tasks/{task_id}", "GET"), { key: viewer, params: { task_id: "task-li-1" } })).text,
      (await send(route("/api/v1/queue", "GET"), { key: viewer, path: "/api/v1/queue?limit=50" })).text,
    ];
    for (const text of seen.slice(0, 3)) {
      expect(text).toContain("12345678901234567890");
      expect(text).toContain("-18446744073709551617");
      expect(text).toContain("98765432109876543210");
    }
    expect(seen[4]).toContain("order 12345678901234567890");
    for (const text of seen) expect(text).not.toContain("12345678901234567000");

    // A verifier worker looks the effect up by the arguments it is leased.
    await runVerifications(t.db, NOW);
    const work = await send(route("/api/v1/verifications", "GET"), {
      key: t.key,
      path: "/api/v1/verifications?worker=w&limit=20",
    });
    const item = work.body.items.find((i: { invocation_id: string }) => i.invocation_id === "li-1");
    expect(item.arguments.order).toBe(12345678901234567890n);
    expect(work.text).toContain("12345678901234567890");
  });

  it("from NDJSON, and an attempt-log line's numbers are read as before", async () => {
    const lines = [
      `{"event_id":"li-2","task_id":"task-li-2","invocation_id":"li-2","tool":"ship_order","arguments":{"order":99999999999999999999}}`,
      `{"event_id":"li-3","task_id":"task-li-3","invocation_id":"li-3","tool":"ship_order","attempt":12345678901234567890,"arguments":{"order":1}}`,
    ].join("\n");
    const req = new Request("http://settle.test/api/v1/envelopes", {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/x-ndjson" },
      body: lines,
    });
    const res = parseExactJson(await (await ingest(req)).text()) as {
      results: Array<{ status: string; error?: { agent_message: string } }>;
    };
    expect(res.results[0]!.status).toBe("accepted");
    // Rounded outside arguments and envelope: refused as too big, as JSON.parse's number always was.
    expect(res.results[1]!.status).toBe("rejected");
    expect(res.results[1]!.error?.agent_message).toMatch(/^Record rejected: attempt: Too big/);
    expect((await read("li-2")).body.attempts[0].arguments.order).toBe(99999999999999999999n);
  });

  it("the guard digests the digits: a call that differs only in them is another call, the same call is a duplicate", async () => {
    const ask = (key: string, order: string) =>
      send(guard, {
        key: t.key,
        text: `{"task_id": "task-g", "tool": "create_refund", "effect_class": "money", "idempotency_key": "${key}",
                "arguments": {"charge": "ch_1", "order": ${order}, "amount": 4900}}`,
      });
    const first = await ask("g-1", "12345678901234567890");
    expect(first.body.allow).toBe(true);
    const stored = await read(first.body.invocation_id);
    expect(stored.body.attempts[0].arguments.order).toBe(12345678901234567890n);
    expect(stored.body.args_digest).toBe(digestOf('{"amount":4900,"charge":"ch_1","order":12345678901234567890}'));

    expect((await ask("g-2", "12345678901234567000")).body).toMatchObject({ allow: true });
    expect((await ask("g-3", "12345678901234567890")).body).toMatchObject({
      allow: false,
      reason: "possible_duplicate",
      invocation_id: first.body.invocation_id,
    });
  });

  it("an approval of 12345678901234567890 does not match a run with 12345678901234567000", async () => {
    const record = (id: string, event: string, attempt: number, order: string, envelope: string) =>
      `{"event_id": "${id}-${event}", "task_id": "task-${id}", "invocation_id": "${id}", "attempt": ${attempt},
        "tool": "create_refund", "effect_class": "money", "idempotency_key": "key-${id}",
        "arguments": {"order": ${order}, "amount": 5000}, "envelope": ${envelope}}`;
    const ask = '{"ok": false, "commit_state": "not_committed", "next_action": "request_approval"}';
    const done = '{"ok": true, "commit_state": "committed"}';
    for (const id of ["ap-1", "ap-2"])
      await send(ingest, { key: t.key, text: `[${record(id, "ask", 1, "12345678901234567890", ask)}]` });
    for (const id of ["ap-1", "ap-2"]) {
      const before = await read(id);
      expect(before.body).toMatchObject({ status: "awaiting_approval", ran_with_other_arguments: false });
      await actOnInvocation(
        t.db,
        { invocationId: id },
        { action: "approve" },
        { actor: "ana@x", version: before.body.version },
      );
    }
    await send(ingest, {
      key: t.key,
      text: `[${record("ap-1", "ran", 2, "12345678901234567000", done)}, ${record("ap-2", "ran", 2, "12345678901234567890", done)}]`,
    });
    expect((await read("ap-1")).body).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: true,
      arguments_review: "open",
    });
    expect((await read("ap-2")).body).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_review: null,
    });
  });

  it("approve with edits through the console's client: an edited long integer is stored, answered and kept to the digit", async () => {
    const operator = (await createOperator(t.db, "operator")).token;
    const record = (id: string, event: string, attempt: number, order: string, envelope: string) =>
      `{"event_id": "${id}-${event}", "task_id": "task-${id}", "invocation_id": "${id}", "attempt": ${attempt},
        "tool": "create_refund", "effect_class": "money", "idempotency_key": "key-${id}",
        "arguments": {"order": ${order}, "amount": 5000}, "envelope": ${envelope}}`;
    const ask = '{"ok": false, "commit_state": "not_committed", "next_action": "request_approval"}';
    await send(ingest, { key: t.key, text: `[${record("ae-1", "ask", 1, "12345678901234567890", ask)}]` });
    const before = await read("ae-1");
    expect(before.body.status).toBe("awaiting_approval");

    // The console's own client (components/api.ts) over the real routes, as the approve-with-edits dialog sends.
    vi.stubGlobal("fetch", (path: string, init: RequestInit) => routeFetch(new URL(path, "http://settle.test"), init));
    const edited = { order: 12345678901234567891n, amount: 5000 };
    const approved = await api
      .post("/api/v1/invocations/{invocation_id}/actions", {
        params: { invocation_id: "ae-1" },
        body: { action: "approve", arguments: edited, version: before.body.version },
        headers: { authorization: `Bearer ${operator}` },
      })
      .finally(() => vi.unstubAllGlobals());
    const digest = digestOf('{"amount":5000,"order":12345678901234567891}');
    expect(approved).toMatchObject({
      status: "approved",
      arguments_edit: { state: "approved", arguments: edited, digest },
    });
    expect(approved.actions.at(-1)).toMatchObject({
      edit: { changes: [{ path: "order", before: 12345678901234567890n, after: 12345678901234567891n }] },
    });

    // What the runtime's client reads: run the call with these digits.
    const decision = await send(route("/api/v1/invocations/{invocation_id}/decision", "GET"), {
      key: t.key,
      params: { invocation_id: "ae-1" },
    });
    expect(decision.body).toMatchObject({ decision: "proceed", approved_arguments: edited });
    expect(decision.text).toContain('"order":12345678901234567891');

    // It runs with them: no other arguments, and the approved edit keeps its digits past the record's fold.
    const done = '{"ok": true, "commit_state": "committed"}';
    await send(ingest, { key: t.key, text: `[${record("ae-1", "ran", 2, "12345678901234567891", done)}]` });
    const after = await read("ae-1");
    expect(after.body).toMatchObject({ status: "succeeded", ran_with_other_arguments: false });
    expect(after.body.arguments_edit).toMatchObject({ state: "approved", arguments: edited, digest });
    for (const text of [decision.text, after.text]) expect(text).not.toContain("12345678901234567000");
  });

  it("approve with edits sent as JSON text: the route reads the edited arguments to the digit", async () => {
    const operator = (await createOperator(t.db, "operator")).token;
    const ask = `{"event_id": "ae-2-ask", "task_id": "task-ae-2", "invocation_id": "ae-2", "tool": "create_refund",
      "effect_class": "money", "idempotency_key": "key-ae-2", "arguments": {"order": 12345678901234567890},
      "envelope": {"ok": false, "commit_state": "not_committed", "next_action": "request_approval"}}`;
    await send(ingest, { key: t.key, text: `[${ask}]` });
    const version = (await read("ae-2")).body.version;
    const acted = await send(route("/api/v1/invocations/{invocation_id}/actions", "POST"), {
      key: operator,
      params: { invocation_id: "ae-2" },
      text: `{"action": "approve", "arguments": {"order": 12345678901234567891, "lines": [{"sku": -18446744073709551617}]}, "version": ${version}}`,
    });
    expect(acted.status).toBe(200);
    expect(acted.body.arguments_edit.arguments).toEqual({
      order: 12345678901234567891n,
      lines: [{ sku: -18446744073709551617n }],
    });
    expect(acted.text).toContain('"order":12345678901234567891');
    expect(acted.text).not.toContain("12345678901234567000");
  });

  it("from an OTLP span's arguments attribute (JSON text)", async () => {
    const nanos = (s: number) => `${BigInt(Date.now() + s * 1000) * 1_000_000n}`;
    const span = {
      traceId: (backend === "postgres" ? "b1" : "c1").repeat(16),
      spanId: "00000000000000b1",
      name: "execute_tool ship_order",
      kind: 1,
      startTimeUnixNano: nanos(-5),
      endTimeUnixNano: nanos(-4),
      attributes: [
        { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
        { key: "gen_ai.tool.name", value: { stringValue: "ship_order" } },
        { key: "gen_ai.tool.call.id", value: { stringValue: "call-li-otlp" } },
        { key: "gen_ai.tool.call.arguments", value: { stringValue: '{"order": 12345678901234567890}' } },
      ],
      status: { code: 2, message: "timeout" },
    };
    const sent = await send(otlp, {
      key: t.key,
      path: "/v1/traces",
      text: JSON.stringify({
        resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: "t" }, spans: [span] }] }],
      }),
    });
    expect(sent.status).toBe(200);
    const list = await send(route("/api/v1/invocations", "GET"), { key: t.key, path: "/api/v1/invocations?limit=100" });
    const id = list.body.items.find(
      (i: { summary: string | null }) => i.summary === "order 12345678901234567890",
    )?.invocation_id;
    expect(id).toBeDefined();
    const inv = await read(id);
    expect(inv.body.args_digest).toBe(digestOf('{"order":12345678901234567890}'));
    expect(inv.body.attempts.find((a: { arguments: unknown }) => a.arguments).arguments.order).toBe(
      12345678901234567890n,
    );
  });
});

/** Up to 40 digits, either sign. */
const integerText = fc
  .tuple(fc.boolean(), fc.integer({ min: 1, max: 40 }))
  .chain(([negative, length]) =>
    fc.stringMatching(new RegExp(`^[1-9]\\d{${length - 1}}$`)).map((digits) => `${negative ? "-" : ""}${digits}`),
  );
/** Where it sits: keys and array positions from the arguments (or the envelope) down. */
const path = fc.array(fc.oneof(fc.constantFrom("a", "id", "amount", "x-y"), fc.integer({ min: 0, max: 2 })), {
  maxLength: 10,
});
const nest = (digits: string, steps: Array<string | number>) =>
  steps.reduceRight<string>(
    (inner, step) => (typeof step === "number" ? `[${'"p",'.repeat(step)}${inner}]` : `{"${step}": ${inner}, "n": 7}`),
    digits,
  );
const at = (value: unknown, steps: Array<string | number>) =>
  steps.reduce<unknown>((v, s) => (v as Record<string | number, unknown>)[s], value);

describe("(property) any integer of up to 40 digits, at any depth", () => {
  let t: TestContext;
  let viewer: string;
  let n = 0;
  beforeAll(async () => {
    t = await openSettle("postgres");
    viewer = (await createOperator(t.db, "viewer")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("round-trips exactly through ingest and every read endpoint", async () => {
    await fc.assert(
      fc.asyncProperty(integerText, path, fc.constantFrom("arguments", "envelope"), async (digits, steps, where) => {
        n += 1;
        const id = `p-${n}`;
        const value = nest(digits, steps);
        const args = where === "arguments" ? `{"v": ${value}}` : '{"v": 1}';
        const envelope = where === "envelope" ? `{"status": 504, "v": ${value}}` : '{"status": 504}';
        const text = `{"event_id": "${id}", "task_id": "task-${id}", "invocation_id": "${id}", "tool": "t",
          "idempotency_key": "k-${id}", "arguments": ${args}, "envelope": ${envelope}}`;
        expect((await send(ingest, { key: t.key, text })).body.results[0].status).toBe("accepted");
        const p = { invocation_id: id };
        const answers = [
          (await send(route("/api/v1/invocations/{invocation_id}", "GET"), { key: t.key, params: p })).body.attempts,
          (await send(route("/api/v1/invocations/{invocation_id}", "GET"), { key: viewer, params: p })).body.attempts,
          (await send(route("/api/v1/invocations/{invocation_id}/attempts", "GET"), { key: t.key, params: p })).body
            .items,
        ];
        for (const attempts of answers) {
          const got = at(attempts[0][where], ["v", ...steps]);
          expect(String(got)).toBe(digits);
        }
        // The digest is of the digits as written (canonical JSON: sorted keys, no spaces).
        if (where === "arguments") {
          const canonical = (v: unknown): string =>
            Array.isArray(v)
              ? `[${v.map(canonical).join(",")}]`
              : typeof v === "object" && v !== null
                ? `{${Object.keys(v)
                    .sort()
                    .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
                    .join(",")}}`
                : typeof v === "bigint"
                  ? v.toString()
                  : JSON.stringify(v);
          const inv = await send(route("/api/v1/invocations/{invocation_id}", "GET"), { key: t.key, params: p });
          expect(inv.body.args_digest).toBe(digestOf(canonical(parseExactJson(args))));
        }
      }),
      { numRuns: 60 },
    );
    expect(n).toBe(60);
  });
});
