import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createSettleClient } from "@settle/client";
import { createSettleClient as createCliClient } from "@/cli/http/settle-client";
import { actOnInvocation } from "@/lib/invocations/act";
import { parseExactJson, stringifyExactJson } from "@/lib/json/exact";
import * as packageJson from "@/packages/settle-client/src/exact-json";
import { openSettle, type TestContext } from "./harness";
import { routeFetch } from "./route-fetch";
import { getInvocation } from "./routes";

// Decision 039 in Settle's own clients, against the real routes and database: the CLI's client writes a request
// body holding a BigInt as its digits (JSON.stringify threw on it) and reads answers as the console's client does;
// @settle/client hands a person's approved edit of an integer past 2^53 to the tool to the digit (JSON.parse
// rounded it, and the run was flagged as made with other arguments), and its copy of the exact reading agrees
// with lib/json's.

const ORDER = 12345678901234567890n;
const EDITED = 12345678901234567891n;
const HELD = {
  ok: false,
  code: "APPROVAL_REQUIRED",
  commit_state: "not_committed",
  next_action: "request_approval",
  retry: { directive: "never", not_before: null, max_attempts_remaining: null },
};

async function readInvocation(key: string, id: string): Promise<Record<string, any>> {
  const req = new Request(`http://settle.test/api/v1/invocations/${id}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const res = await getInvocation(req, { params: Promise.resolve({ invocation_id: id }) });
  return parseExactJson(await res.text()) as Record<string, any>;
}

describe("integers past 2^53 through Settle's clients", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("the CLI's client sends a BigInt in a JSON body as its digits, and reads them back", async () => {
    vi.stubGlobal("fetch", routeFetch);
    const cli = createCliClient({ url: new URL("http://settle.test/"), key: t.key, retries: 0, sleep: async () => {} });
    const record = {
      event_id: "cli-li-1",
      task_id: "task-cli-li-1",
      invocation_id: "cli-li-1",
      tool: "ship_order",
      arguments: { order: ORDER, lines: [{ sku: -18446744073709551617n }] },
    };
    const sent = await cli.api.post("/api/v1/envelopes", { body: { records: [record] } });
    expect(sent).toMatchObject({ ok: true, status: 207, body: { accepted: 1 } });
    expect((await readInvocation(t.key, "cli-li-1")).attempts[0]!.arguments).toEqual(record.arguments);

    const read = await cli.api.get("/api/v1/invocations/{invocation_id}", { params: { invocation_id: "cli-li-1" } });
    expect(read.ok && read.body.attempts[0]!.arguments).toEqual(record.arguments);
  });

  /** Acts as a person in the console once the invocation awaits approval. */
  async function approveWhenHeld(id: string, args: Record<string, unknown>) {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      const [row] = await t.db.driver.query<{ status: string; version: number }>(
        "SELECT status, version FROM invocations WHERE invocation_id = $1",
        [id],
      );
      if (row?.status === "awaiting_approval") {
        const done = await actOnInvocation(
          t.db,
          { invocationId: id },
          { action: "approve", arguments: args },
          { actor: "ana@example.com", version: row.version },
        );
        expect(done.ok).toBe(true);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${id} never awaited approval`);
  }

  it("@settle/client's getDecision hands over the approved edit to the digit", async () => {
    const ask = `{"event_id": "sdk-li-1-ask", "task_id": "task-sdk-li-1", "invocation_id": "sdk-li-1",
      "tool": "create_refund", "effect_class": "money", "idempotency_key": "key-sdk-li-1",
      "arguments": {"order": 12345678901234567890, "amount": 5000}, "envelope": ${JSON.stringify(HELD)}}`;
    const sent = await routeFetch("http://settle.test/api/v1/envelopes", {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: `[${ask}]`,
    });
    expect(sent.status).toBe(207);
    await approveWhenHeld("sdk-li-1", { order: EDITED, amount: 5000 });
    const settle = createSettleClient({ url: "http://settle.test", key: t.key, fetch: routeFetch });
    const decision = await settle.getDecision("sdk-li-1");
    expect(decision).toMatchObject({ decision: "proceed", approved_arguments: { order: EDITED, amount: 5000 } });
  });

  it("@settle/client's wrapTool runs the tool with the approved digits, reports them, and nothing is flagged", async () => {
    const settle = createSettleClient({ url: "http://settle.test", key: t.key, fetch: routeFetch, batchDelayMs: 1 });
    const ran: unknown[] = [];
    const refund = settle.wrapTool(
      async (args: Record<string, unknown>) => {
        ran.push(args);
        return ran.length === 1 ? HELD : { id: "re_li" };
      },
      {
        tool: "create_refund",
        effectClass: "money",
        taskId: "sdk-li-2",
        idempotencyKey: "refund-li",
        classify: (r) => (r.kind === "returned" && r.value === HELD ? HELD : { outcome: "ok", effect_applied: "yes" }),
      },
    );
    const original = { order: ORDER, amount: 5000 };
    const edited = { order: EDITED, amount: 5000 };
    const [run] = await Promise.all([refund(original), approveWhenHeld("sdk-li-2:refund-li", edited)]);
    expect(ran).toEqual([original, edited]);
    expect(run).toMatchObject({ status: "done", approvedArguments: edited, calls: 2 });
    expect(await readInvocation(t.key, run.invocationId)).toMatchObject({
      status: "succeeded",
      ran_with_other_arguments: false,
      arguments_edit: { state: "approved", arguments: edited },
    });
  });
});

describe("@settle/client's copy of the exact reading (packages/settle-client/src/exact-json.ts)", () => {
  const integer = fc
    .tuple(fc.boolean(), fc.integer({ min: 1, max: 110 }))
    .chain(([negative, length]) =>
      fc.stringMatching(new RegExp(`^[1-9]\\d{${length - 1}}$`)).map((d) => `${negative ? "-" : ""}${d}`),
    );
  // JSON text with long integers among other values: in arrays, objects, beside strings of digits.
  const text = fc
    .tuple(fc.json(), fc.array(integer, { maxLength: 4 }), fc.string())
    .map(([json, ints, s]) => `{"a": ${json}, "n": [${ints.join(", ")}], "s": ${JSON.stringify(s + ints.join(""))}}`);

  it("(property) reads and writes any JSON text as lib/json does", () => {
    fc.assert(
      fc.property(text, (json) => {
        const ours = packageJson.parseExactJson(json);
        expect(ours).toEqual(parseExactJson(json));
        expect(packageJson.stringifyExactJson(ours)).toBe(stringifyExactJson(ours));
      }),
      { numRuns: 500 },
    );
  });

  it("throws JSON.parse's error for text that is not JSON, and a cycle's TypeError", () => {
    for (const bad of ['{"a":12345678901234567890', "[12345678901234567890 1]", "{"]) {
      expect(() => packageJson.parseExactJson(bad)).toThrow(SyntaxError);
      expect(() => packageJson.parseExactJson(bad)).toThrow(
        (() => {
          try {
            JSON.parse(bad);
          } catch (error) {
            return (error as Error).message;
          }
          return "";
        })(),
      );
    }
    const cycle: Record<string, unknown> = { a: 1n };
    cycle.self = cycle;
    expect(() => packageJson.stringifyExactJson(cycle)).toThrow(TypeError);
  });
});
