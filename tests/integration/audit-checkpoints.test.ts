import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkpointSha256, type CheckpointBody } from "@/lib/chain/checkpoints";
import { verifyChains, type ChainReport } from "@/lib/chain/verify";
import { getDb } from "@/lib/db/client";
import { setEnv } from "@/lib/env";
import { ensureEvidenceKey } from "@/lib/evidence/keys";
import type { Db } from "@/lib/db/client";
import { actOnInvocation } from "@/lib/invocations/act";
import { readManifest } from "@/lib/retention/archive";
import { applyRetention } from "@/lib/retention/retire";
import { restoreArchive } from "@/lib/retention/restore";
import { call, openSettle, runSettleCli, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

// Retention keeps the chains checkable (docs/audit.md "Retention checkpoints"): a retired month and the swept
// audit trail leave one signed checkpoint per chain, named in the archive's manifest; the walk crosses the places
// they took as archived, refuses a checkpoint that was changed (its hash, or its signature), names an entry
// edited before retention took it, and reads the rows again once the archive is restored.

const DAY = 86_400_000;
// Retention run as if 500 days had passed: every closed call is past both periods, every month past due.
const later = () => new Date(Date.now() + 500 * DAY);

describe.each<Backend>(["postgres", "pglite"])("retention checkpoints on %s", (backend) => {
  let t: TestContext;
  let db: Db;
  let dir: string;
  let runtimeId: string;
  const q = (text: string, params: unknown[] = []) => db.driver.query<Record<string, any>>(text, params);
  const record = (id: string, phase: string, envelope?: object) => ({
    event_id: `${id}-${phase}`,
    task_id: `task-${id}`,
    invocation_id: id,
    attempt: 1,
    tool: "refund",
    effect_class: "money",
    phase,
    at: new Date().toISOString(),
    ...(envelope ? { envelope } : {}),
  });
  const send = async (id: string, envelope: object) => {
    const res = await call(ingest, {
      key: t.key,
      body: { records: [record(id, "intent"), record(id, "outcome", envelope)] },
    });
    expect(res.body.accepted).toBe(2);
  };
  const reports = async () => verifyChains(db.driver);
  const of = (all: ChainReport[], name: string) => all.find((r) => r.name === name)!;

  beforeAll(async () => {
    t = await openSettle(backend);
    db = t.db;
    dir = mkdtempSync(path.join(tmpdir(), "settle-checkpoints-"));
    runtimeId = (await q(`SELECT id::text FROM runtimes WHERE name = $1`, [t.runtime]))[0]!.id;
    // Closed calls that leave, around an open one whose rows stay: the chain keeps places on both sides of runs.
    await send("gone-1", { outcome: "ok", effect_applied: "yes" });
    await send("open", { outcome: "unknown", effect_applied: "unknown" });
    await send("gone-2", { outcome: "ok", effect_applied: "yes" });
    const [v] = await q(`SELECT version FROM invocations WHERE invocation_id = 'gone-2'`);
    const noted = await actOnInvocation(
      db,
      { invocationId: "gone-2" },
      { action: "comment", note: "refund checked" },
      { actor: "ana@example.com", version: v!.version },
    );
    expect(noted.ok).toBe(true);
    await send("gone-3", { outcome: "ok", effect_applied: "yes" });
    // No webhook endpoint: the transitions owe no event (fanned_out is not part of an entry's content).
    await q(`UPDATE invocation_transitions SET fanned_out = true`);
    expect(of(await reports(), t.runtime).broken).toBeNull();
  });
  afterAll(async () => {
    await t?.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  it("leaves a signed checkpoint per chain that the manifest names, and the walk crosses it as archived", async () => {
    const before = of(await reports(), t.runtime);
    const run = await applyRetention(db, later(), dir);
    expect(run.retired.length).toBeGreaterThan(0);
    const left = await q(
      `SELECT i.invocation_id, count(a.*)::int AS n FROM invocations i LEFT JOIN attempts a ON a.invocation_uid = i.id
        GROUP BY 1 ORDER BY 1`,
    );
    expect(Object.fromEntries(left.map((r) => [r.invocation_id, r.n]))).toEqual({
      "gone-1": 0,
      "gone-2": 0,
      "gone-3": 0,
      open: 2,
    });
    const checkpoints = await q(
      `SELECT archive, chain, entries::int AS entries, sha256, signature FROM audit_checkpoints`,
    );
    expect(checkpoints.map((c) => c.chain).sort()).toContain(runtimeId);
    expect(checkpoints.map((c) => c.chain)).toContain("admin");
    for (const c of checkpoints)
      expect(c.signature).toMatchObject({ algorithm: "Ed25519", key_id: expect.stringMatching(/^sek_/) });
    // The manifest names each checkpoint by its SHA-256, beside the file whose rows left.
    const named = (await readManifest(dir)).files.flatMap((f) =>
      (f.checkpoints ?? []).map((c) => ({ ...c, file: f.file })),
    );
    expect(named.map((n) => `${n.file} ${n.chain} ${n.sha256}`).sort()).toEqual(
      checkpoints.map((c) => `${c.archive} ${c.chain} ${c.sha256}`).sort(),
    );
    const after = await reports();
    const runtime = of(after, t.runtime);
    const archived = checkpoints.filter((c) => c.chain === runtimeId).reduce((n, c) => n + c.entries, 0);
    // Three closed calls' attempts, transitions and the comment left; the open call's entries are read.
    expect(archived).toBeGreaterThanOrEqual(6 + 3 + 1);
    expect(runtime).toMatchObject({ broken: null, head: before.head, archived, checked: before.head - archived });
    expect(of(after, "admin")).toMatchObject({ broken: null });
    expect(of(after, "admin").archived).toBeGreaterThan(0);
  });

  async function tamperedCheckpoint(change: (body: CheckpointBody) => CheckpointBody, rehash: boolean) {
    const [row] = await q(
      `SELECT archive, chain, entries::int AS entries, runs, last_hash, first_unsound, sha256 FROM audit_checkpoints
        WHERE chain = $1 ORDER BY archive LIMIT 1`,
      [runtimeId],
    );
    const body: CheckpointBody = change({
      archive: row!.archive,
      chain: row!.chain,
      entries: row!.entries,
      runs: row!.runs.map(([from, to, firstPrev, lastHash]: [number, number, string, string]) => ({
        from,
        to,
        firstPrev,
        lastHash,
      })),
      lastHash: row!.last_hash,
      firstUnsound: row!.first_unsound,
    });
    const runs = JSON.stringify(body.runs.map((r) => [r.from, r.to, r.firstPrev, r.lastHash]));
    await q(
      `UPDATE audit_checkpoints SET runs = $3::jsonb, sha256 = $4, entries = $5 WHERE archive = $1 AND chain = $2`,
      [row!.archive, row!.chain, runs, rehash ? checkpointSha256(body) : row!.sha256, body.entries],
    );
    const broken = of(await reports(), t.runtime).broken;
    await q(
      `UPDATE audit_checkpoints SET runs = $3::jsonb, sha256 = $4, entries = $5 WHERE archive = $1 AND chain = $2`,
      [row!.archive, row!.chain, JSON.stringify(row!.runs), row!.sha256, row!.entries],
    );
    return { broken, archive: row!.archive as string };
  }
  // A run said to end one place later hides a deletion of the entry after it.
  const stretched = (b: CheckpointBody) => ({
    ...b,
    runs: b.runs.map((r, i) => (i === 0 ? { ...r, to: r.to + 1 } : r)),
  });

  it("names a checkpoint that was changed, and one changed and hashed again but not signed by Settle", async () => {
    const edited = await tamperedCheckpoint(stretched, false);
    expect(edited.broken).toMatchObject({
      reason: expect.stringContaining(`archive ${edited.archive}'s checkpoint was changed`),
    });
    const rehashed = await tamperedCheckpoint((b) => ({ ...stretched(b), entries: b.entries + 1 }), true);
    expect(rehashed.broken).toMatchObject({
      reason: expect.stringContaining(
        `archive ${rehashed.archive}'s checkpoint is not signed by one of Settle's evidence keys`,
      ),
    });
    expect(of(await reports(), t.runtime).broken).toBeNull();
  });

  it.runIf(backend === "postgres")(
    "settle audit verify exits 0 reporting archived entries, 1 naming a changed checkpoint",
    async () => {
      const whole = await runSettleCli(["audit", "verify"]);
      expect(whole).toMatchObject({ code: 0, stderr: "" });
      expect(whole.stdout).toMatch(/ARCHIVED/);
      expect(whole.stdout).toMatch(new RegExp(`${t.runtime}\\s+\\d+\\s+[1-9]\\d*\\s+#1–#\\d+\\s+whole`));
      db = await getDb(); // the command closed the database it opened
      const [row] = await q(`SELECT archive, sha256 FROM audit_checkpoints WHERE chain = $1 ORDER BY archive LIMIT 1`, [
        runtimeId,
      ]);
      await q(`UPDATE audit_checkpoints SET entries = entries + 1 WHERE archive = $1 AND chain = $2`, [
        row!.archive,
        runtimeId,
      ]);
      const broken = await runSettleCli(["audit", "verify", "--runtime", t.runtime]);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain(`runtime ${t.runtime}: entry #`);
      expect(broken.stderr).toContain(`archive ${row!.archive}'s checkpoint was changed`);
      db = await getDb();
      await q(`UPDATE audit_checkpoints SET entries = entries - 1 WHERE archive = $1 AND chain = $2`, [
        row!.archive,
        runtimeId,
      ]);
    },
  );

  it("reads the restored rows again: the chains are whole with nothing archived", async () => {
    const files = (await readManifest(dir)).files.filter((f) => (f.checkpoints ?? []).length > 0);
    for (const f of files) await restoreArchive(db.driver, path.join(dir, f.file));
    const after = await reports();
    for (const name of [t.runtime, "admin"]) {
      expect(of(after, name)).toMatchObject({ broken: null, archived: 0 });
      expect(of(after, name).checked).toBe(of(after, name).head);
    }
    // Once back, a row edited is named as any other is.
    await q(`UPDATE attempts SET tool = 'refund_twice' WHERE chain_seq = 1 AND runtime_id = $1::uuid`, [runtimeId]);
    expect(of(await reports(), t.runtime).broken).toMatchObject({
      seq: 1,
      reason: expect.stringContaining("was changed"),
    });
  });
});

describe("a row edited before retention archived it", () => {
  let t: TestContext;
  let dir: string;
  beforeAll(async () => {
    t = await openSettle("postgres");
    dir = mkdtempSync(path.join(tmpdir(), "settle-checkpoints-"));
  });
  afterAll(async () => {
    await t?.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is named by the checkpoint its archive left, not hidden by it", async () => {
    for (const id of ["a", "b"]) {
      const res = await call(ingest, {
        key: t.key,
        body: {
          records: ["intent", "outcome"].map((phase) => ({
            event_id: `${id}-${phase}`,
            task_id: "task",
            invocation_id: id,
            attempt: 1,
            tool: "refund",
            effect_class: "money",
            phase,
            at: new Date().toISOString(),
            ...(phase === "outcome" ? { envelope: { outcome: "ok", effect_applied: "yes" } } : {}),
          })),
        },
      });
      expect(res.body.accepted).toBe(2);
    }
    await t.db.driver.query(`UPDATE invocation_transitions SET fanned_out = true`);
    const [edited] = await t.db.driver.query<{ s: number }>(
      `UPDATE attempts SET code = 'edited' WHERE event_key = (SELECT event_key FROM attempts ORDER BY chain_seq DESC LIMIT 1)
       RETURNING chain_seq::int AS s`,
    );
    await applyRetention(t.db, later(), dir);
    const [runtime] = (await verifyChains(t.db.driver)).filter((r) => r.name === t.runtime);
    expect(runtime!.broken).toMatchObject({
      seq: edited!.s,
      reason: expect.stringContaining("was changed or moved before retention archived it"),
    });
  });
});

describe("retention with an evidence key it cannot use", () => {
  let t: TestContext;
  let dir: string;
  beforeAll(async () => {
    t = await openSettle("postgres");
    dir = mkdtempSync(path.join(tmpdir(), "settle-checkpoints-"));
  });
  afterAll(async () => {
    setEnv({ SETTLE_AUTH_SECRET: undefined });
    await t?.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  it("takes nothing: its checkpoints could not be signed", async () => {
    await ensureEvidenceKey(t.db);
    setEnv({ SETTLE_AUTH_SECRET: "another-secret-of-at-least-32-characters" });
    await expect(applyRetention(t.db, later(), dir)).rejects.toThrow(/sealed under another auth secret/);
    const [archives] = await t.db.driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM retention_archives`);
    expect(archives!.n).toBe(0);
    setEnv({ SETTLE_AUTH_SECRET: undefined });
    const run = await applyRetention(t.db, later(), dir);
    expect(run.retired.length).toBeGreaterThan(0);
  });
});
