import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createSettleClient as createCliClient } from "@/cli/http/settle-client";
import { parseExactJson } from "@/lib/json/exact";
import { openSettle, type TestContext } from "./harness";
import { routeFetch } from "./route-fetch";
import { getInvocation } from "./routes";

// Decision 039 in Settle's own clients, against the real routes and database: the CLI's client writes a request
// body holding a BigInt as its digits (JSON.stringify threw on it) and reads answers as the console's client does.

const ORDER = 12345678901234567890n;

async function readInvocation(key: string, id: string) {
  const req = new Request(`http://settle.test/api/v1/invocations/${id}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const res = await getInvocation(req, { params: Promise.resolve({ invocation_id: id }) });
  return parseExactJson(await res.text()) as { attempts: Array<{ arguments: Record<string, unknown> }> };
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
});
