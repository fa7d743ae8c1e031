import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "@/lib/audit/audit";
import { actOnInvocation } from "@/lib/invocations/act";
import { parseExactJson } from "@/lib/json/exact";
import { apiRoutes } from "@/server/routes";
import { createOperator, openSettle, type Backend, type TestContext } from "./harness";

// Decision 039 on the audit trail: an approve-with-edits diff holding an integer past 2^53 reached the audit page
// and its CSV rounded (12345678901234567891 read back by Prisma as 12345678901234567000), while the invocation's
// own trail showed the digits. The page reads through listAudit; the API and the CSV are its route.

const audit = apiRoutes["/api/v1/audit"].GET;
const ingest = apiRoutes["/api/v1/envelopes"].POST;

async function get(key: string, query: string): Promise<{ status: number; text: string }> {
  const req = new Request(`http://settle.test/api/v1/audit?${query}`, { headers: { authorization: `Bearer ${key}` } });
  const res = await audit(req, { params: Promise.resolve({}) });
  return { status: res.status, text: await res.text() };
}

describe.each<Backend>(["postgres", "pglite"])("the audit trail keeps an edit's digits (%s)", (backend) => {
  let t: TestContext;
  let viewer: string;
  beforeAll(async () => {
    t = await openSettle(backend);
    viewer = (await createOperator(t.db, "viewer")).token;
    const record = `{"event_id": "au-1-ask", "task_id": "task-au-1", "invocation_id": "au-1", "tool": "create_refund",
      "effect_class": "money", "idempotency_key": "key-au-1", "arguments": {"order": 12345678901234567890, "amount": 5000},
      "envelope": {"ok": false, "commit_state": "not_committed", "next_action": "request_approval"}}`;
    const res = await ingest(
      new Request("http://settle.test/api/v1/envelopes", {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: `[${record}]`,
      }),
    );
    expect(res.status).toBe(207);
    const [row] = await t.db.driver.query<{ version: number }>(
      "SELECT version FROM invocations WHERE invocation_id = 'au-1'",
    );
    const acted = await actOnInvocation(
      t.db,
      { invocationId: "au-1" },
      { action: "approve", arguments: { order: 12345678901234567891n, amount: 5000 } },
      { actor: "ana@x", version: row!.version },
    );
    expect(acted.ok).toBe(true);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  const change = { path: "order", before: 12345678901234567890n, after: 12345678901234567891n };

  it("the audit page's read (listAudit) gives the diff as BigInts with every digit", async () => {
    const page = await listAudit(t.db, { q: "au-1" });
    const entry = page.items.find((e) => e.action === "approve");
    expect(entry?.edit).toEqual({ changes: [change] });
  });

  it("GET /api/v1/audit answers the digits", async () => {
    const answer = await get(viewer, "q=au-1");
    expect(answer.status).toBe(200);
    const body = parseExactJson(answer.text) as { items: Array<{ action: string; edit: unknown }> };
    expect(body.items.find((e) => e.action === "approve")?.edit).toEqual({ changes: [change] });
    expect(answer.text).not.toContain("12345678901234567000");
  });

  it("the CSV export writes the digits", async () => {
    const answer = await get(viewer, "q=au-1&format=csv");
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('""before"":12345678901234567890,""after"":12345678901234567891');
    expect(answer.text).not.toContain("12345678901234567000");
  });
});
