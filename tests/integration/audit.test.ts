import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as auditGet } from "@/app/api/v1/audit/route";
import { CSV_PAGE_SIZE, auditCsvColumns } from "@/lib/audit/audit";
import { actOnInvocation } from "@/lib/invocations/act";
import type { OperatorAction } from "@/lib/outcome/actions";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

/** RFC 4180, strictly: what a spreadsheet or a CSV library would read back. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i += 1;
    } else if (quoted) {
      if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") {
      quoted = true;
    } else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i += 1;
    } else {
      field += c;
    }
  }
  if (field !== "" || row.length > 0) throw new Error(`CSV does not end with CRLF: ${JSON.stringify(text.slice(-40))}`);
  return rows;
}

const unknownWrite = (id: string, task: string, tool: string) => ({
  event_id: `${id}-o1`,
  task_id: task,
  invocation_id: id,
  attempt: 1,
  tool,
  effect_class: "money",
  at: "2026-11-29T05:00:00Z",
  envelope: { title: "Gateway Timeout", status: 504 },
});

describe.each<Backend>(["postgres", "pglite"])("the audit trail on %s", (backend) => {
  let t: TestContext;
  let viewerToken: string;
  const hostile = 'Checked "Stripe", then the ledger,\nline two\r\nline three';

  async function act(invocationId: string, action: OperatorAction, actor: string, at: string, runtimeId?: string) {
    const current = await t.db.prisma.invocation.findFirstOrThrow({
      where: { invocationId, ...(runtimeId ? { runtimeId } : {}) },
    });
    const done = await actOnInvocation(t.db, { invocationId, runtimeId }, action, {
      actor,
      version: current.version,
      now: new Date(at),
    });
    expect(done.ok).toBe(true);
  }

  const audit = (query = "", key = viewerToken) => call(auditGet, { key, path: `/api/v1/audit${query}` });

  beforeAll(async () => {
    t = await openSettle(backend);
    viewerToken = (await createOperator(t.db, "viewer")).token;
    const other = await createRuntimeKey(t.db, "rt-other");
    await call(ingest, {
      key: t.key,
      body: { records: [unknownWrite("inv-a", "ord-1", "charge_card"), unknownWrite("inv-b", "ord-2", "send_email")] },
    });
    await call(ingest, { key: other.key, body: unknownWrite("inv-c", "ord-3", "charge_card") });
    const otherId = (await t.db.prisma.runtime.findUniqueOrThrow({ where: { name: "rt-other" } })).id;

    await act(
      "inv-a",
      { action: "request_verification", note: "please probe" },
      "ana@example.com",
      "2026-11-29T06:00:00Z",
    );
    await act(
      "inv-a",
      { action: "record_verification", result: "found", evidence: hostile },
      "ana@example.com",
      "2026-11-29T06:05:00Z",
    );
    await act(
      "inv-b",
      { action: "escalate", note: '=HYPERLINK("http://evil.example","click")' },
      "bo@example.com",
      "2026-11-30T09:00:00Z",
    );
    await act("inv-b", { action: "comment", note: "+1 from me" }, "bo@example.com", "2026-11-30T09:01:00Z");
    await act("inv-b", { action: "comment", note: "-2 and @ana" }, "cy@example.com", "2026-11-30T09:02:00Z");
    await act(
      "inv-c",
      { action: "mark_reconciled", commit_state: "not_committed", note: "\tno charge in the ledger" },
      "ana@example.com",
      "2026-12-01T10:00:00Z",
      otherId,
    );
    // Setting up made admin entries (a key, a viewer) stamped now: these tests read invocation actions,
    // admin entries have their own (tests/integration/security.test.ts).
    await t.db.prisma.adminAction.deleteMany();
    await act(
      "inv-c",
      { action: "assign", assignee: "cy@example.com" },
      "ana@example.com",
      "2026-12-01T10:30:00Z",
      otherId,
    );
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("lists every action newest first, with the invocation it touched and what was decided", async () => {
    const res = await audit();
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.items.map((e: { action: string }) => e.action)).toEqual([
      "assign",
      "mark_reconciled",
      "comment",
      "comment",
      "escalate",
      "record_verification",
      "request_verification",
    ]);
    expect(res.body.items[5]).toEqual({
      id: expect.any(String),
      kind: "invocation",
      at: "2026-11-29T06:05:00.000Z",
      actor: "ana@example.com",
      action: "record_verification",
      result: "found",
      commit_state: null,
      assignee: null,
      reply: null,
      edit: null,
      from_status: "verifying",
      to_status: "reconciled",
      note: hostile,
      version: 3,
      invocation_id: "inv-a",
      task_id: "ord-1",
      runtime: "rt-test",
      tool: "charge_card",
      effect_class: "money",
      target_type: null,
      target_id: null,
      before: null,
      after: null,
    });
    expect(res.body.items[0]).toMatchObject({ action: "assign", assignee: "cy@example.com", runtime: "rt-other" });
    expect(res.body.items[1]).toMatchObject({
      commit_state: "not_committed",
      from_status: "outcome_unknown",
      to_status: "reconciled",
    });
  });

  it.each([
    [
      "actor (part, any case)",
      "?actor=ANA@",
      ["assign", "mark_reconciled", "record_verification", "request_verification"],
    ],
    ["action list", "?action=comment,escalate", ["comment", "comment", "escalate"]],
    ["from status", "?from_status=verifying", ["record_verification"]],
    ["to status", "?to_status=reconciled", ["assign", "mark_reconciled", "record_verification"]],
    ["runtime", "?runtime=rt-other", ["assign", "mark_reconciled"]],
    ["tool", "?tool=send_email", ["comment", "comment", "escalate"]],
    ["task or invocation search", "?q=ORD-1", ["record_verification", "request_verification"]],
    ["invocation search", "?q=inv-c", ["assign", "mark_reconciled"]],
    ["time from (inclusive)", "?from=2026-11-30T09:01:00Z", ["assign", "mark_reconciled", "comment", "comment"]],
    [
      "a plain 'to' date includes that whole UTC day",
      "?to=2026-11-30",
      ["comment", "comment", "escalate", "record_verification", "request_verification"],
    ],
    [
      "a 'to' time is exclusive",
      "?to=2026-11-30T09:01:00Z",
      ["escalate", "record_verification", "request_verification"],
    ],
    ["one day", "?from=2026-11-30&to=2026-11-30", ["comment", "comment", "escalate"]],
    ["filters combine", "?actor=bo&action=comment", ["comment"]],
    [
      "empty form fields mean any",
      "?actor=&action=&runtime=&from=&to=&q=",
      ["assign", "mark_reconciled", "comment", "comment", "escalate", "record_verification", "request_verification"],
    ],
    ["nothing matches", "?tool=no_such_tool", []],
  ])("filters by %s", async (_name, query, actions) => {
    const res = await audit(query);
    expect(res.status).toBe(200);
    expect(res.body.items.map((e: { action: string }) => e.action)).toEqual(actions);
  });

  it.each([
    ["an unknown status", "?to_status=done"],
    ["a date that is not one", "?from=yesterday"],
    ["a time without its offset", "?from=2026-11-30T09:00:00"],
    ["a forged cursor", "?cursor=bm90LWEtY3Vyc29y"],
    ["a limit over 200", "?limit=500"],
  ])("refuses %s with a 400 envelope", async (_name, query) => {
    const res = await audit(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ ok: false, code: "INVALID_REQUEST" });
  });

  it("pages with a cursor: every entry once, in order, until next_cursor is null", async () => {
    const all = (await audit()).body.items.map((e: { id: string }) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Awaited<ReturnType<typeof audit>> = await audit(`?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.items.map((e: { id: string }) => e.id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
    const filtered = await audit("?runtime=rt-test&limit=2");
    const next = await audit(`?runtime=rt-test&limit=2&cursor=${filtered.body.next_cursor}`);
    expect([...filtered.body.items, ...next.body.items].map((e: { action: string }) => e.action)).toEqual([
      "comment",
      "comment",
      "escalate",
      "record_verification",
    ]);
  });

  it.each(["to=0000-01-01T00:00:00Z", "from=0001-01-01T00:00:00%2B01:00", "to=9999-12-31"])(
    "refuses a bound the database cannot hold (%s) with a 400 naming it",
    async (query) => {
      const res = await audit(`?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: "INVALID_REQUEST",
        safe_details: { issues: [{ path: query.split("=")[0] }] },
      });
    },
  );

  it("exports CSV: a header, RFC 4180 quoting, formulas neutralised, a dated file name", async () => {
    const res = await call(auditGet, { key: viewerToken, path: "/api/v1/audit?format=csv" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers.get("content-disposition")).toMatch(
      /^attachment; filename="settle-audit-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const text = res.body as string;
    expect(text.startsWith(`${auditCsvColumns.join(",")}\r\n`)).toBe(true);
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual([...auditCsvColumns]);
    expect(rows).toHaveLength(7);
    const col = (name: (typeof auditCsvColumns)[number]) => header!.indexOf(name);
    const byAction = (action: string, n = 0) => rows.filter((r) => r[col("action")] === action)[n]!;

    expect(byAction("record_verification")[col("note")]).toBe(hostile);
    expect(text).toContain(`"Checked ""Stripe"", then the ledger,\nline two\r\nline three"`);
    expect(byAction("record_verification")[col("result")]).toBe("found");
    expect(byAction("escalate")[col("note")]).toBe('\'=HYPERLINK("http://evil.example","click")');
    expect(byAction("comment", 0)[col("note")]).toBe("'-2 and @ana");
    expect(byAction("comment", 1)[col("note")]).toBe("'+1 from me");
    expect(byAction("mark_reconciled")[col("note")]).toBe("'\tno charge in the ledger");
    expect(byAction("assign")).toEqual(
      expect.arrayContaining([
        "2026-12-01T10:30:00.000Z",
        "ana@example.com",
        "cy@example.com",
        "rt-other",
        "ord-3",
        "inv-c",
        "charge_card",
      ]),
    );
    for (const row of rows) for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
  });

  it("exports CSV with the page's filters, and refuses people without a session or token", async () => {
    const res = await call(auditGet, { key: viewerToken, path: "/api/v1/audit?format=csv&runtime=rt-other" });
    const [header, ...rows] = parseCsv(res.body);
    expect(rows.map((r) => r[header!.indexOf("action")])).toEqual(["assign", "mark_reconciled"]);
    expect((await call(auditGet, { path: "/api/v1/audit?format=csv" })).status).toBe(401);
    expect((await call(auditGet, { key: t.key, path: "/api/v1/audit" })).status).toBe(403);
  });

  it(`exports every matching row across pages of ${CSV_PAGE_SIZE}, once each`, async () => {
    const invocation = await t.db.prisma.invocation.findFirstOrThrow({ where: { invocationId: "inv-b" } });
    const count = CSV_PAGE_SIZE * 2 + 345;
    // The trail is append-only and written only by actOnInvocation; thousands of
    // entries are inserted directly here only to make the export span pages.
    await t.db.driver.query(
      `INSERT INTO invocation_actions (runtime_id, id, invocation_uid, seq, action, actor, at, from_status, to_status, note, payload)
       SELECT $3::uuid, gen_random_uuid(), $1::uuid, 1000 + n, 'comment', 'bulk@example.com',
              timestamptz '2026-12-02T00:00:00Z' + (n / 3) * interval '1 second', 'escalated', 'escalated', 'bulk note ' || n, '{}'::jsonb
         FROM generate_series(1, $2::int) AS n`,
      [invocation.id, count, invocation.runtimeId],
    );
    const res = await call(auditGet, { key: viewerToken, path: "/api/v1/audit?format=csv&actor=bulk@" });
    const [header, ...rows] = parseCsv(res.body);
    expect(rows).toHaveLength(count);
    const notes = rows.map((r) => r[header!.indexOf("note")]);
    expect(new Set(notes).size).toBe(count);
    expect(notes).toContain("bulk note 1");
    expect(notes).toContain(`bulk note ${count}`);
    const times = rows.map((r) => r[0]!);
    expect([...times].sort().reverse()).toEqual(times);
    const everything = parseCsv((await call(auditGet, { key: viewerToken, path: "/api/v1/audit?format=csv" })).body);
    expect(everything).toHaveLength(1 + count + 7);
  });
});
