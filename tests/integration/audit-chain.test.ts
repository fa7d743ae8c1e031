import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAdminAction } from "@/lib/audit/admin";
import { verifyChains, type ChainReport } from "@/lib/chain/verify";
import { getDb } from "@/lib/db/client";
import { openSettle, runSettleCli, type Backend, type TestContext } from "./harness";

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
    expect(whole.stdout).toMatch(/admin\s+1\s+#1–#1\s+whole/);
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
