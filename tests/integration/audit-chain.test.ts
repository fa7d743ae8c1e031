import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAdminAction } from "@/lib/audit/admin";
import { actOnInvocation } from "@/lib/invocations/act";
import { verifyChains, type ChainReport } from "@/lib/chain/verify";
import { checkNewestLinks, listBrokenChains } from "@/lib/chain/watch";
import { getDb } from "@/lib/db/client";
import { renderMetrics } from "@/lib/observability/metrics";
import { call, openSettle, runSettleCli, type Backend, type TestContext } from "./harness";
import { guard, ingest } from "./routes";

// The tamper-evident trail (docs/audit.md): every chained row edited, deleted or moved through SQL is named by
// the walk, and `settle audit verify` exits non-zero naming it.

const brokenOf = (reports: ChainReport[], name: string) => reports.find((r) => r.name === name)?.broken ?? null;

describe.each<Backend>(["postgres", "pglite"])("the admin audit's chain on %s", (backend) => {
  let t: TestContext;
  const q = (text: string, params: unknown[] = []) => t.db.driver.query<Record<string, any>>(text, params);

  beforeAll(async () => {
    t = await openSettle(backend);
    for (let i = 0; i < 5; i += 1)
      await recordAdminAction(t.db.driver, {
        actor: `admin-${i}`,
        action: "policy_changed",
        targetType: "policy",
        targetId: `p-${i}`,
        before: { n: i },
        after: { n: i + 1, at: "2026-12-07T09:00:00.123456Z" },
      });
  });
  afterAll(async () => t.teardown());

  // Each tampering is undone by the next test's fresh copy: the rows are put back as they were.
  async function tampered(sql: string, params: unknown[] = []): Promise<ChainReport["broken"]> {
    const saved = await q(`SELECT * FROM admin_actions ORDER BY chain_seq`);
    await q(sql, params);
    const broken = brokenOf(await verifyChains(t.db.driver), "admin");
    await q(`DELETE FROM admin_actions`);
    await q(`INSERT INTO admin_actions SELECT * FROM json_populate_recordset(NULL::admin_actions, $1::json)`, [
      JSON.stringify(
        saved.map((r) => ({ ...r, chain_content: hexOf(r.chain_content), chain_prev: hexOf(r.chain_prev) })),
      ),
    ]);
    return broken;
  }
  const hexOf = (b: Uint8Array | null) => (b ? `\\x${Buffer.from(b).toString("hex")}` : null);

  it("is whole as written, every entry in place", async () => {
    const reports = await verifyChains(t.db.driver);
    const admin = reports.find((r) => r.name === "admin")!;
    // The runtime key openSettle made is the first admin entry.
    expect(admin).toMatchObject({ broken: null, head: 6, checked: 6 });
    const places = await q(`SELECT chain_seq::int AS s FROM admin_actions ORDER BY chain_seq`);
    expect(places.map((r) => r.s)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("names an entry whose content was edited", async () => {
    const broken = await tampered(`UPDATE admin_actions SET actor = 'someone-else' WHERE chain_seq = 3`);
    expect(broken).toMatchObject({ seq: 3, kind: "admin", reason: expect.stringContaining("was changed") });
  });

  it("names an entry whose content and hash were both rewritten, at the entry after it", async () => {
    const broken = await tampered(
      `UPDATE admin_actions SET after = '{"n": 99}'::jsonb,
              chain_content = sha256(convert_to(jsonb_build_array('admin', actor, action, target_type, target_id, before, '{"n": 99}'::jsonb,
                to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text, 'UTF8'))
        WHERE chain_seq = 2`,
    );
    expect(broken).toMatchObject({ seq: 3, reason: expect.stringContaining("does not follow entry #2") });
  });

  it("names a deleted entry by its place", async () => {
    const broken = await tampered(`DELETE FROM admin_actions WHERE chain_seq = 4`);
    expect(broken).toMatchObject({ seq: 4, reason: expect.stringContaining("is missing") });
  });

  it("names the last entry deleted", async () => {
    const broken = await tampered(`DELETE FROM admin_actions WHERE chain_seq = 6`);
    expect(broken).toMatchObject({ seq: 6, reason: expect.stringContaining("is missing") });
  });

  it("names entries whose places were swapped", async () => {
    const broken = await tampered(
      `UPDATE admin_actions SET chain_seq = CASE chain_seq WHEN 2 THEN 3 ELSE 2 END WHERE chain_seq IN (2, 3)`,
    );
    expect(broken).toMatchObject({ seq: 2, reason: expect.stringContaining("does not follow entry #1") });
  });

  it("names a row inserted around Settle", async () => {
    const broken = await tampered(
      `INSERT INTO admin_actions (id, actor, action, target_type, target_id) VALUES (gen_random_uuid(), 'x', 'policy_changed', 'policy', 'p')`,
    );
    expect(broken).toMatchObject({ kind: "admin", reason: expect.stringContaining("not in the chain") });
  });

  it("is whole again once the rows are back", async () => {
    expect(brokenOf(await verifyChains(t.db.driver), "admin")).toBeNull();
  });
});

describe("settle audit verify", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => t.teardown());

  it("exits 0 when every chain is whole, and 1 naming the first broken entry", async () => {
    const whole = await runSettleCli(["audit", "verify"]);
    expect(whole).toMatchObject({ code: 0, stderr: "" });
    expect(whole.stdout).toMatch(/admin\s+1\s+0\s+#1–#1\s+whole/);
    // The command closed the database it opened: open it again to tamper.
    const db = await getDb();
    await db.driver.query(`UPDATE admin_actions SET target_id = 'another' WHERE chain_seq = 1`);
    const broken = await runSettleCli(["audit", "verify", "--json"]);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)[0]).toMatchObject({ name: "admin", broken: { seq: 1, kind: "admin" } });
    expect(broken.stderr).toMatch(/the admin audit: entry #1 \(admin [0-9a-f-]{36}\) was changed/);
    const unknown = await runSettleCli(["audit", "verify", "--runtime", "nobody"]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toMatch(/No runtime nobody/);
  });
});

describe.each<Backend>(["postgres", "pglite"])("a runtime's chain on %s", (backend) => {
  let t: TestContext;
  let runtimeId: string;
  const q = (text: string, params: unknown[] = []) => t.db.driver.query<Record<string, any>>(text, params);
  const record = (id: string, phase: string, extra: object = {}) => ({
    event_id: `${id}-${phase}`,
    task_id: "task-1",
    invocation_id: id,
    attempt: 1,
    tool: "refund",
    effect_class: "money",
    phase,
    at: "2026-12-07T08:00:00.123456+01:00",
    ...extra,
  });
  const ask = (key: string) =>
    call(guard, {
      key: t.key,
      path: "/api/v1/guard",
      body: { task_id: "task-2", tool: "send_email", idempotency_key: key, effect_class: "send" },
    });
  const walk = async () => (await verifyChains(t.db.driver, { runtime: runtimeId }))[0]!;

  beforeAll(async () => {
    t = await openSettle(backend);
    runtimeId = (await q(`SELECT id::text FROM runtimes WHERE name = $1`, [t.runtime]))[0]!.id;
    const sent = await call(ingest, {
      key: t.key,
      body: {
        records: [
          record("inv-1", "intent", { arguments: { amount: 12345678901234567890n.toString(), note: "ü\u0000?" } }),
          record("inv-1", "outcome", { envelope: { status: 504, title: "Gateway Timeout" } }),
          record("inv-2", "outcome", { outcome: "success", envelope: { ok: true, n: 1.5e-7 } }),
        ],
      },
    });
    expect(sent.body.rejected).toBe(0);
    expect((await ask("k-1")).body.allow).toBe(true);
    expect((await ask("k-1")).body.allow).toBe(false);
    const version = (await q(`SELECT version FROM invocations WHERE invocation_id = 'inv-1'`))[0]!.version;
    const done = await actOnInvocation(
      t.db,
      { invocationId: "inv-1" },
      { action: "escalate", note: "look" },
      {
        actor: "ana@example.com",
        version,
      },
    );
    expect(done.ok).toBe(true);
  });
  afterAll(async () => t.teardown());

  it("links every attempt, transition, action and guard answer in one chain, whole", async () => {
    const kinds = await q(
      `SELECT k, count(*)::int AS n, min(s)::int AS lo, max(s)::int AS hi FROM (
         SELECT 'attempt' AS k, chain_seq AS s FROM attempts UNION ALL SELECT 'transition', chain_seq FROM invocation_transitions
         UNION ALL SELECT 'action', chain_seq FROM invocation_actions UNION ALL SELECT 'guard', chain_seq FROM guard_checks) x
       GROUP BY k ORDER BY k`,
    );
    expect(Object.fromEntries(kinds.map((k) => [k.k, k.n]))).toMatchObject({ attempt: 4, guard: 2, action: 1 });
    const total = kinds.reduce((a, k) => a + k.n, 0);
    expect(await walk()).toMatchObject({ broken: null, head: total, checked: total });
    // Whatever the session's time zone, the content hashes the same.
    const inKolkata = await t.db.driver.transaction((tx) => verifyChains(tx, { runtime: runtimeId }), {
      settings: ["timezone = 'Asia/Kolkata'"],
    });
    expect(inKolkata[0]!.broken).toBeNull();
  });

  it("the hourly check finds a broken newest link: the admins' banner lines and settle_audit_chain_broken", async () => {
    const now = new Date();
    expect(await checkNewestLinks(t.db.driver, now)).toEqual([]);
    const [last] = await q(`SELECT event_key, chain_seq::int AS s FROM attempts ORDER BY chain_seq DESC LIMIT 1`);
    await q(`CREATE TABLE kept_aside AS SELECT * FROM attempts WHERE chain_seq = $1`, [last!.s]);
    await q(`UPDATE attempts SET code = 'EDITED' WHERE chain_seq = $1`, [last!.s]);
    // Checked within the hour: not again until it has passed.
    expect(await checkNewestLinks(t.db.driver, new Date(now.getTime() + 60_000))).toEqual([]);
    const later = new Date(now.getTime() + 3_600_000);
    const found = await checkNewestLinks(t.db.driver, later);
    expect(found).toEqual([
      `runtime ${t.runtime}: entry #${last!.s} (attempt ${last!.event_key}) was changed: its content does not match its hash`,
    ]);
    expect(await listBrokenChains(t.db.driver)).toEqual(found);
    expect((await renderMetrics(t.db)).body).toMatch(/^settle_audit_chain_broken 1$/m);
    await q(`DELETE FROM attempts WHERE chain_seq = $1`, [last!.s]);
    await q(`INSERT INTO attempts SELECT * FROM kept_aside`);
    await q(`DROP TABLE kept_aside`);
    expect(await checkNewestLinks(t.db.driver, new Date(later.getTime() + 3_600_000))).toEqual([]);
    expect(await listBrokenChains(t.db.driver)).toEqual([]);
  });

  it("stays whole under concurrent writers of one runtime: one place each, in commit order", async () => {
    const sends = Array.from({ length: 24 }, (_, i) =>
      call(ingest, { key: t.key, body: { records: [record(`c-${i}`, "outcome", { envelope: { status: 504 } })] } }),
    );
    const guards = Array.from({ length: 6 }, (_, i) => ask(`c-key-${i % 3}`));
    for (const r of await Promise.all([...sends, ...guards])) expect(r.status).toBeLessThan(300);
    const [count] = await q(
      `SELECT (SELECT count(*) FROM attempts) + (SELECT count(*) FROM invocation_transitions)
            + (SELECT count(*) FROM invocation_actions) + (SELECT count(*) FROM guard_checks) AS n`,
    );
    const report = await walk();
    expect(report).toMatchObject({ broken: null, head: Number(count!.n), checked: Number(count!.n) });
  });

  const tables = [
    ["attempts", "attempt", `SET outcome = 'success'`, "event_key"],
    ["invocation_transitions", "transition", `SET to_status = 'succeeded'`, "id"],
    ["invocation_actions", "action", `SET actor = 'mallory@example.com'`, "id"],
    ["guard_checks", "guard", `SET allow = true`, "id"],
  ] as const;

  it.each(tables)("names an edited, a deleted and a moved row of %s", async (table, kind, change, key) => {
    const [row] = await q(
      `SELECT ${key}::text AS key, chain_seq::int AS s FROM ${table} ORDER BY chain_seq DESC LIMIT 1`,
    );
    const { key: id, s } = row!;
    await q(`CREATE TABLE aside AS SELECT * FROM ${table} WHERE chain_seq = $1`, [s]);
    await q(`UPDATE ${table} ${change} WHERE chain_seq = $1`, [s]);
    expect((await walk()).broken).toMatchObject({ seq: s, kind, key: id, reason: expect.stringContaining("changed") });
    await q(`DELETE FROM ${table} WHERE chain_seq = $1`, [s]);
    expect((await walk()).broken).toMatchObject({ seq: s, reason: expect.stringContaining("is missing") });
    await q(`INSERT INTO ${table} SELECT * FROM aside`);
    expect((await walk()).broken).toBeNull();
    await q(`UPDATE ${table} SET chain_seq = 1000 WHERE chain_seq = $1`, [s]);
    expect((await walk()).broken).toMatchObject({ seq: s, reason: expect.stringContaining("is missing") });
    await q(`UPDATE ${table} SET chain_seq = $1 WHERE chain_seq = 1000`, [s]);
    expect((await walk()).broken).toBeNull();
    await q(`DROP TABLE aside`);
  });
});
