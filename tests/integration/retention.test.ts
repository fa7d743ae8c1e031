import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPgliteDriver } from "@/lib/db/driver";
import { applyMigrations } from "@/lib/db/migrate";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { listMetricCases } from "@/lib/metrics/metrics";
import { refreshMetricRollups } from "@/lib/metrics/rollup";
import { metricCasesQuerySchema } from "@/lib/metrics/schema";
import { readManifest, verifyArchive } from "@/lib/retention/archive";
import { ensurePartitions, listShelfPartitions } from "@/lib/retention/partitions";
import { applyRetention } from "@/lib/retention/retire";
import { restoreArchive } from "@/lib/retention/restore";
import { getRetiredBefore } from "@/lib/retention/retired";
import { putRuntimeRetention } from "@/lib/retention/settings";
import { addMonths, partitionName, shelfOf } from "@/lib/retention/shelves";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

// Retention takes exactly what it may: a month leaves whole (archived, then its partition dropped) except the
// rows of invocations that must stay — not settled, in conflict, or settled inside their runtime's period —
// which move to the kept shelf; the metrics' rollups keep their numbers. A retirement stopped part-way
// resumes without losing or doubling a row, and an archived month comes back with restore.

const DAY = 86_400_000;
const now = new Date();
const ago = (days: number) => new Date(now.getTime() - days * DAY);
const OLD = shelfOf(ago(200)); // unknown since then
const MID = shelfOf(ago(130)); // settled 100 days ago: leaves

const records = (id: string, envelope: object, at: Date) => [
  {
    event_id: `${id}-i`,
    task_id: `task-${id}`,
    invocation_id: id,
    tool: "create_invoice",
    effect_class: "create",
    attempt: 1,
    phase: "intent",
    at: at.toISOString(),
  },
  {
    event_id: `${id}-o`,
    task_id: `task-${id}`,
    invocation_id: id,
    tool: "create_invoice",
    effect_class: "create",
    attempt: 1,
    phase: "outcome",
    at: new Date(at.getTime() + 1000).toISOString(),
    envelope,
  },
];
const OK = { outcome: "ok", effect_applied: "yes" };
const UNKNOWN = { outcome: "unknown", effect_applied: "unknown" };

describe.each<Backend>(["postgres", "pglite"])("retention on %s", (backend) => {
  let t: TestContext;
  let dir: string;

  /** Ingests an invocation, then dates it: its records received `receivedDaysAgo`, its status since `settledDaysAgo`. */
  async function oldInvocation(
    id: string,
    envelope: object,
    receivedDaysAgo: number,
    settledDaysAgo: number,
    key = t.key,
  ) {
    const res = await call(ingest, { key, body: { records: records(id, envelope, ago(receivedDaysAgo)) } });
    expect((res.body as { accepted: number }).accepted).toBe(2);
    const received = ago(receivedDaysAgo).toISOString();
    await t.db.driver.query(
      `UPDATE attempts SET received_at = $2::timestamptz, shelf = (date_trunc('month', $2::timestamptz AT TIME ZONE 'UTC'))::date
        WHERE invocation_uid = (SELECT id FROM invocations WHERE invocation_id = $1)`,
      [id, received],
    );
    await t.db.driver.query(
      `UPDATE invocations SET first_seen_at = $2::timestamptz, last_attempt_at = $2::timestamptz, status_since = $3::timestamptz WHERE invocation_id = $1`,
      [id, received, ago(settledDaysAgo).toISOString()],
    );
  }
  const attemptsOf = async (id: string) =>
    (
      await t.db.driver.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM attempts WHERE invocation_uid = (SELECT id FROM invocations WHERE invocation_id = $1)`,
        [id],
      )
    )[0]!.n;
  const exists = async (name: string) =>
    (await t.db.driver.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [name]))[0]!.found;

  beforeAll(async () => {
    t = await openSettle(backend);
    dir = mkdtempSync(path.join(tmpdir(), "settle-archive-"));
    await oldInvocation("gone", OK, 130, 100);
    await oldInvocation("unknown", UNKNOWN, 200, 200);
    await oldInvocation("conflicted", OK, 130, 100);
    await t.db.driver.query(`UPDATE invocations SET conflict = true WHERE invocation_id = 'conflicted'`);
    await oldInvocation("lately", OK, 130, 10);
    await oldInvocation("fresh", OK, 1, 1);
    await ensurePartitions(t.db.driver, now);
  });
  afterAll(async () => {
    await t?.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  it("takes records for a month whose partition is missing, and then gives them one", async () => {
    const current = partitionName("attempts", shelfOf(now));
    // As if the job had not made this month's partition yet: set the month's rows aside.
    await t.db.driver.exec(
      `ALTER TABLE attempts DETACH PARTITION ${current}; ALTER TABLE ${current} RENAME TO held_aside`,
    );
    const res = await call(ingest, { key: t.key, body: { records: records("late", OK, now) } });
    expect((res.body as { accepted: number }).accepted).toBe(2);
    const inDefault = async () =>
      (await t.db.driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM attempts_default`))[0]!.n;
    expect(await inDefault()).toBe(2);
    expect(await attemptsOf("late")).toBe(2);
    // A resent record is still a duplicate while it waits there.
    const again = await call(ingest, { key: t.key, body: { records: records("late", OK, now) } });
    expect((again.body as { duplicates: number }).duplicates).toBe(2);

    expect(await ensurePartitions(t.db.driver, now)).toContain(current);
    expect(await inDefault()).toBe(0);
    expect(await attemptsOf("late")).toBe(2);
    await t.db.driver.exec(`INSERT INTO attempts SELECT * FROM held_aside; DROP TABLE held_aside`);
    expect(await attemptsOf("fresh")).toBe(2);
  });

  it("makes a partition for a month that had none and moves its rows out of the default partition", async () => {
    const months = (await listShelfPartitions(t.db.driver, "attempts")).map((p) => p.shelf);
    expect(months).toEqual(expect.arrayContaining([OLD, MID, shelfOf(now), addMonths(shelfOf(now), 2)]));
    const [inDefault] = await t.db.driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM attempts_default`);
    expect(inDefault!.n).toBe(0);
    expect(await attemptsOf("gone")).toBe(2);
  });

  it("makes partitions ahead across a month boundary, for every table partitioned by month", async () => {
    const lastMinute = new Date(Date.UTC(2031, 11, 31, 23, 59, 59));
    const months = ["2031_12", "2032_01", "2032_02"];
    const tables = ["attempts", "invocation_transitions", "guard_checks"];
    const made = await ensurePartitions(t.db.driver, lastMinute);
    expect(made).toEqual(tables.flatMap((table) => months.map((m) => `${table}_p${m}`)));
    expect(await ensurePartitions(t.db.driver, new Date(Date.UTC(2032, 0, 1, 0, 0, 1)))).toEqual(
      tables.map((table) => `${table}_p2032_03`),
    );
    for (const table of tables) {
      for (const m of [...months, "2032_03"]) await t.db.driver.query(`DROP TABLE ${table}_p${m}`);
    }
  });

  it("resumes a retirement that stopped between its archive and its drop, and takes exactly what it may", async () => {
    await refreshMetricRollups(t.db);
    const hoursBefore = await t.db.driver.query(
      `SELECT hour, tool, invocations, attempts FROM metric_hours ORDER BY hour, tool`,
    );

    // The oldest month goes first: its one invocation is still unknown, so it leaves empty.
    const oldName = partitionName("attempts", OLD);
    const midName = partitionName("attempts", MID);
    const stopped = applyRetention(t.db, now, dir, { stopAfter: "archived" });
    await expect(stopped).rejects.toThrow(`retention stopped after archived ${oldName}`);
    expect(await exists(oldName)).toBe(true); // archived, not dropped
    const [state] = await t.db.driver.query<{ phase: string }>(`SELECT phase FROM retention_archives WHERE name = $1`, [
      oldName,
    ]);
    expect(state!.phase).toBe("archived");

    const run = await applyRetention(t.db, now, dir);
    expect(run.retired.map((r) => [r.file, r.rows])).toEqual([
      [`${oldName}.jsonl.gz`, 0],
      [`${midName}.jsonl.gz`, 2],
    ]);
    expect(await exists(oldName)).toBe(false);
    expect(await exists(midName)).toBe(false);
    expect(await attemptsOf("gone")).toBe(0);
    expect(await attemptsOf("unknown")).toBe(2);
    expect(await attemptsOf("conflicted")).toBe(2);
    expect(await attemptsOf("lately")).toBe(2);
    expect(await attemptsOf("fresh")).toBe(2);
    // Its invocation stays, and so do the numbers the rollups made of it.
    const [gone] = await t.db.driver.query<{ status: string }>(
      `SELECT status FROM invocations WHERE invocation_id = 'gone'`,
    );
    expect(gone!.status).toBe("succeeded");
    await refreshMetricRollups(t.db);
    expect(
      await t.db.driver.query(`SELECT hour, tool, invocations, attempts FROM metric_hours ORDER BY hour, tool`),
    ).toEqual(hoursBefore);

    const manifest = await readManifest(dir);
    const entry = manifest.files.find((f) => f.file === `${midName}.jsonl.gz`)!;
    expect(entry.rows).toBe(2);
    expect(await verifyArchive(dir, entry)).toBe("ok");
    const [audit] = await t.db.driver.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM admin_actions WHERE action = 'partition_archived' AND target_id = $1`,
      [midName],
    );
    expect(audit!.n).toBe(1);
    // Run again: nothing more goes.
    const again = await applyRetention(t.db, now, dir);
    expect(again.retired).toEqual([]);
    expect(again.kept_archived).toBe(0);
  });

  it("tells a metric's list of cases when its range reaches back before a retired month", async () => {
    const casesFrom = (from: Date) =>
      listMetricCases(
        t.db,
        metricCasesQuerySchema.parse({ metric: "unknown_outcomes", from: from.toISOString(), to: now.toISOString() }),
        now,
      );
    // The newest month retired so far is MID's: its rows, and every older month's, are in the archive.
    expect((await casesFrom(ago(200))).retired_before).toBe(`${addMonths(MID, 1)}T00:00:00.000Z`);
    expect((await casesFrom(ago(20))).retired_before).toBeNull();
  });

  it("sweeps a kept row once its runtime's shorter period has passed", async () => {
    await putRuntimeRetention(t.db, t.runtime, { attempts_days: 5, audit_days: 400 }, "admin@example.com", now);
    const run = await applyRetention(t.db, now, dir);
    expect(run.kept_archived).toBe(2); // "lately", settled 10 days ago
    expect(await attemptsOf("lately")).toBe(0);
    expect(await attemptsOf("unknown")).toBe(2);
    expect(await attemptsOf("fresh")).toBe(2);
  });

  it("sweeps a shorter-period runtime's rows out of their month early, and leaves the month whole for the rest", async () => {
    // The test runtime keeps attempts 5 days (above); another follows the default's 90.
    const other = await createRuntimeKey(t.db, "rt-default");
    await oldInvocation("short-old", OK, 40, 30);
    await oldInvocation("default-old", OK, 40, 30, other.key);
    await ensurePartitions(t.db.driver, now);
    const month = partitionName("attempts", shelfOf(ago(40)));
    const run = await applyRetention(t.db, now, dir, { audit: false });
    expect(run.early_archived).toBe(2);
    expect(run.retired.map((r) => r.source)).not.toContain(month);
    expect(await attemptsOf("short-old")).toBe(0);
    expect(await attemptsOf("default-old")).toBe(2);
    // Not moved to the kept shelf: it leaves with its month, when the default's period has passed.
    const shelves = await t.db.driver.query<{ shelf: string }>(
      `SELECT DISTINCT shelf::text AS shelf FROM attempts WHERE invocation_uid = (SELECT id FROM invocations WHERE invocation_id = 'default-old')`,
    );
    expect(shelves).toEqual([{ shelf: shelfOf(ago(40)) }]);
    const [batch] = await t.db.driver.query<{ rows: number }>(
      `SELECT rows::int AS rows FROM retention_archives WHERE source = 'attempts' AND shelf IS NULL`,
    );
    expect(batch).toEqual({ rows: 2 });
    // A metric's cases now may miss this runtime's rows of invocations closed 5 days before the sweep.
    const [swept] = await t.db.driver.query<{ at: string }>(
      `SELECT max(started_at) AS at FROM retention_archives WHERE source = 'attempts' AND shelf IS NULL`,
    );
    expect((await getRetiredBefore(t.db.driver)).attempts).toEqual(new Date(new Date(swept!.at).getTime() - 5 * DAY));
  });

  it("finishes a month that was detached when its run stopped", async () => {
    await oldInvocation("detached", OK, 160, 120);
    await ensurePartitions(t.db.driver, now);
    const name = partitionName("attempts", shelfOf(ago(160)));
    await expect(applyRetention(t.db, now, dir, { stopAfter: "detached" })).rejects.toThrow(
      `retention stopped after detached ${name}`,
    );
    expect(await attemptsOf("detached")).toBe(0); // detached: no reader sees it
    expect(await exists(name)).toBe(true);
    const run = await applyRetention(t.db, now, dir);
    expect(run.retired.map((r) => [r.file, r.rows])).toEqual([[`${name}.jsonl.gz`, 2]]);
    expect(await exists(name)).toBe(false);
  });

  it("keeps the audit trail of an open invocation however old, and archives what passed its period", async () => {
    await t.db.driver.query(
      `UPDATE invocations SET status_since = $1::timestamptz WHERE invocation_id IN ('gone', 'unknown')`,
      [ago(500).toISOString()],
    );
    await t.db.driver.query(
      `INSERT INTO invocation_actions (runtime_id, id, invocation_uid, seq, action, actor, at, from_status, to_status)
       SELECT runtime_id, gen_random_uuid(), id, 90, 'add_note', 'ops@example.com', $1::timestamptz, status, status FROM invocations
        WHERE invocation_id IN ('gone', 'unknown')`,
      [ago(450).toISOString()],
    );
    await t.db.driver.query(
      `INSERT INTO admin_actions (id, actor, action, target_type, target_id, at) VALUES (gen_random_uuid(), 'a', 'policy_changed', 'policy', '*', $1::timestamptz)`,
      [ago(401).toISOString()],
    );
    const count = async (sql: string) => (await t.db.driver.query<{ n: number }>(sql))[0]!.n;
    const actionsOf = (id: string) =>
      count(
        `SELECT count(*)::int AS n FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid WHERE i.invocation_id = '${id}'`,
      );
    expect(await actionsOf("gone")).toBe(1);
    const run = await applyRetention(t.db, now, dir);
    expect(run.audit_archived).toBeGreaterThanOrEqual(2);
    expect(await actionsOf("gone")).toBe(0);
    expect(await actionsOf("unknown")).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM admin_actions WHERE at < now() - interval '400 days'`)).toBe(0);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM invocation_transitions t JOIN invocations i ON i.id = t.invocation_uid WHERE i.invocation_id = 'unknown'`,
      ),
    ).toBeGreaterThan(0);
  });

  it("retires a month of transitions past the audit period, keeping an open invocation's and an unsent one's", async () => {
    await oldInvocation("unsent", OK, 500, 480);
    const SHELF = shelfOf(ago(450));
    const name = partitionName("invocation_transitions", SHELF);
    await t.db.driver.query(
      `UPDATE invocations SET status_since = $1::timestamptz WHERE invocation_id IN ('gone', 'unknown', 'unsent')`,
      [ago(480).toISOString()],
    );
    // Their transitions were recorded 450 days ago (a month with no partition yet: they wait in the default one).
    await t.db.driver.query(
      `UPDATE invocation_transitions SET recorded_at = $1::timestamptz, shelf = $2::date, fanned_out = (i.invocation_id <> 'unsent')
         FROM invocations i WHERE i.id = invocation_transitions.invocation_uid AND i.invocation_id IN ('gone', 'unknown', 'unsent')`,
      [ago(450).toISOString(), SHELF],
    );
    // The guard's answers of that month: for two invocations, and one naming an invocation Settle never saw.
    await t.db.driver.query(
      `INSERT INTO guard_checks (id, runtime_id, task_id, invocation_id, tool, idempotency_key, allow, reason, at, shelf)
       SELECT gen_random_uuid(), (SELECT id FROM runtimes WHERE name = $1), 'task', x, 'create_invoice', 'k-' || x, true, NULL,
              $2::timestamptz, $3::date
         FROM unnest(ARRAY['gone', 'unknown', 'nobody']) AS x`,
      [t.runtime, ago(450).toISOString(), SHELF],
    );
    const guardChecksOf = async () =>
      Object.fromEntries(
        (
          await t.db.driver.query<{ invocation_id: string; shelf: string }>(
            `SELECT invocation_id, shelf::text AS shelf FROM guard_checks WHERE at < now() - interval '400 days'`,
          )
        ).map((r) => [r.invocation_id, r.shelf]),
      );
    const transitionsOf = async (id: string) =>
      (
        await t.db.driver.query<{ n: number; kept: number }>(
          `SELECT count(*)::int AS n, count(*) FILTER (WHERE shelf = 'infinity')::int AS kept FROM invocation_transitions
            WHERE invocation_uid = (SELECT id FROM invocations WHERE invocation_id = $1)`,
          [id],
        )
      )[0]!;
    const before = { gone: await transitionsOf("gone"), unknown: await transitionsOf("unknown") };
    expect(before.gone.n).toBeGreaterThan(0);

    const run = await applyRetention(t.db, now, dir, { audit: false });
    expect(run.partitions_made).toContain(name);
    const retired = run.retired.find((r) => r.file === `${name}.jsonl.gz`);
    expect(retired?.rows).toBe(before.gone.n);
    expect(await exists(name)).toBe(false);
    expect(await transitionsOf("gone")).toEqual({ n: 0, kept: 0 });
    // Its guard answer went with it; the open one's stays, kept; one for no known invocation stays too.
    expect(await guardChecksOf()).toEqual({ unknown: "infinity", nobody: "infinity" });
    expect(await exists(partitionName("guard_checks", SHELF))).toBe(false);
    // Still unknown: kept, all of them. Closed long ago but its events not yet sent to a webhook: kept too.
    expect(await transitionsOf("unknown")).toEqual({ n: before.unknown.n, kept: before.unknown.n });
    const unsent = await transitionsOf("unsent");
    expect(unsent.kept).toBe(unsent.n);
    expect(unsent.n).toBeGreaterThan(0);

    // Once sent, the kept rows leave with the next run, through a batch of the kept shelf.
    await t.db.driver.query(`UPDATE invocation_transitions SET fanned_out = true WHERE shelf = 'infinity'`);
    const next = await applyRetention(t.db, now, dir, { audit: false });
    expect(next.kept_archived).toBe(unsent.n);
    expect((await transitionsOf("unsent")).n).toBe(0);
    expect((await transitionsOf("unknown")).n).toBe(before.unknown.n);
    const [batch] = await t.db.driver.query<{ phase: string; rows: number }>(
      `SELECT phase, rows::int AS rows FROM retention_archives WHERE source = 'invocation_transitions_kept'`,
    );
    expect(batch).toEqual({ phase: "deleted", rows: unsent.n });
  });

  it("restores an archived month into another database", async () => {
    const midName = partitionName("attempts", MID);
    const scratch = await createPgliteDriver("memory://");
    try {
      await applyMigrations(scratch);
      const report = await restoreArchive(scratch, path.join(dir, `${midName}.jsonl.gz`));
      expect(report).toEqual({ table: "attempts", source: midName, rows: 2 });
      const rows = await scratch.query<{ event_key: string; shelf: string }>(
        `SELECT event_key, shelf::text AS shelf FROM attempts ORDER BY event_key`,
      );
      expect(rows).toEqual([
        { event_key: "gone-i", shelf: MID },
        { event_key: "gone-o", shelf: MID },
      ]);
      expect((await restoreArchive(scratch, path.join(dir, `${midName}.jsonl.gz`))).rows).toBe(2);
      expect(await scratch.query(`SELECT 1 FROM attempts`)).toHaveLength(2);
      // A month of status changes comes back into its month's partition, ids as they were.
      const transitions = partitionName("invocation_transitions", shelfOf(ago(450)));
      const archived = (await readManifest(dir)).files.find((f) => f.file === `${transitions}.jsonl.gz`)!;
      expect((await restoreArchive(scratch, path.join(dir, archived.file))).rows).toBe(archived.rows);
      const [back] = await scratch.query<{ n: number; shelves: string[] }>(
        `SELECT count(DISTINCT id)::int AS n, array_agg(DISTINCT shelf::text) AS shelves FROM ${transitions}`,
      );
      expect(back).toEqual({ n: archived.rows, shelves: [shelfOf(ago(450))] });
    } finally {
      await scratch.close();
    }
  });
});
