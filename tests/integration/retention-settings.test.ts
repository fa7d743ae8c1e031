import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getRoute, PUT as putRoute } from "@/app/api/v1/retention/route";
import { DELETE as resetRoute, PUT as putRuntimeRoute } from "@/app/api/v1/retention/runtimes/[runtime]/route";
import { getDb } from "@/lib/db/client";
import { setEnv } from "@/lib/env";
import { writeArchive } from "@/lib/retention/archive";
import { call, createOperator, openSettle, runSettleCli, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

// Retention as data: everyone signed in reads it, only admins change it, every change is in the admin audit
// trail; the CLI sets and shows the same rows, lists the archive with each file checked, and restores a file.

describe.each<Backend>(["postgres", "pglite"])("retention settings on %s", (backend) => {
  let t: TestContext;
  let admin: string;
  let viewer: string;
  let operator: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "settle-archive-cli-"));
    t = await openSettle(backend, { SETTLE_ARCHIVE_DIR: dir });
    admin = (await createOperator(t.db, "admin", "root@example.com")).token;
    viewer = (await createOperator(t.db, "viewer")).token;
    operator = (await createOperator(t.db, "operator")).token;
  });
  afterAll(async () => {
    await t?.teardown();
    setEnv({ SETTLE_ARCHIVE_DIR: undefined });
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads the built-in periods before anything is set, for every runtime", async () => {
    const res = await call(getRoute, { key: viewer });
    expect(res.status).toBe(200);
    expect(res.body.default).toMatchObject({ attempts_days: 90, audit_days: 400, source: "built_in" });
    expect(res.body.runtimes).toEqual([
      expect.objectContaining({ runtime: t.runtime, attempts_days: 90, audit_days: 400, source: "built_in" }),
    ]);
    expect(res.body.archives).toEqual([]);
    expect((await call(getRoute, { key: t.key })).status).toBe(403);
  });

  it("lets only admins change it, validates, and records every change", async () => {
    const body = { attempts_days: 30, audit_days: 365 };
    expect((await call(putRoute, { method: "PUT", key: operator, body })).status).toBe(403);
    const bad = await call(putRoute, { method: "PUT", key: admin, body: { attempts_days: 0, audit_days: 365 } });
    expect(bad).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(bad.body.agent_message).toContain("attempts_days is at least 1 day");
    expect((await call(putRoute, { method: "PUT", key: admin, body: { attempts_days: 30 } })).status).toBe(400);

    const saved = await call(putRoute, { method: "PUT", key: admin, body });
    expect(saved.body.default).toMatchObject({ ...body, source: "default", updated_by: "root@example.com" });
    expect(saved.body.runtimes[0]).toMatchObject({ ...body, source: "default" });

    const own = await call(putRuntimeRoute, {
      method: "PUT",
      key: admin,
      params: { runtime: t.runtime },
      body: { attempts_days: 7, audit_days: 30 },
    });
    expect(own.body.runtimes[0]).toMatchObject({ runtime: t.runtime, attempts_days: 7, source: "own" });
    const missing = await call(putRuntimeRoute, { method: "PUT", key: admin, params: { runtime: "nope" }, body });
    expect(missing).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });

    const reset = await call(resetRoute, { method: "DELETE", key: admin, params: { runtime: t.runtime } });
    expect(reset.body.runtimes[0]).toMatchObject({ attempts_days: 30, source: "default" });
    expect((await call(resetRoute, { method: "DELETE", key: admin, params: { runtime: t.runtime } })).status).toBe(404);

    const audit = await t.db.driver.query<{ actor: string; target_id: string; before: unknown; after: unknown }>(
      `SELECT actor, target_id, before, after FROM admin_actions WHERE action = 'retention_changed' ORDER BY at, id`,
    );
    expect(audit).toEqual(
      expect.arrayContaining([
        { actor: "root@example.com", target_id: "*", before: null, after: body },
        { actor: "root@example.com", target_id: t.runtime, before: { attempts_days: 7, audit_days: 30 }, after: null },
      ]),
    );
    expect(audit).toHaveLength(3);
  });
});

// The CLI opens and closes the database per command (an in-memory PGlite would not outlive one).
describe("retention and the archive from the CLI", () => {
  let t: TestContext;
  let dir: string;
  const db = () => getDb();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "settle-archive-cli-"));
    t = await openSettle("postgres", { SETTLE_ARCHIVE_DIR: dir });
  });
  afterAll(async () => {
    await t?.teardown();
    setEnv({ SETTLE_ARCHIVE_DIR: undefined });
    rmSync(dir, { recursive: true, force: true });
  });

  it("sets, shows and resets through the CLI, audited as `cli`", async () => {
    const set = await runSettleCli([
      "retention",
      "set",
      "--runtime",
      t.runtime,
      "--attempts-days",
      "14",
      "--audit-days",
      "100",
    ]);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(new RegExp(`${t.runtime}\\s+14\\s+100\\s+own`));
    const shown = JSON.parse((await runSettleCli(["retention", "show", "--json"])).stdout);
    expect(shown.runtimes[0]).toMatchObject({ attempts_days: 14, updated_by: "cli" });
    const wrong = await runSettleCli(["retention", "set", "--attempts-days", "0", "--audit-days", "10"]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("--attempts-days must be a whole number from 1 to 3650");
    expect((await runSettleCli(["retention", "set", "--audit-days", "10"])).stderr).toContain(
      "--attempts-days is required",
    );
    expect((await runSettleCli(["retention", "reset", t.runtime])).code).toBe(0);
    const again = await runSettleCli(["retention", "reset", t.runtime]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("has no retention period of its own");
  });

  it("runs retention, lists the archive with checks, and restores a file; a damaged file is refused", async () => {
    const empty = await runSettleCli(["archive", "list"]);
    expect(empty).toMatchObject({ code: 0, stdout: "" });
    expect(empty.stderr).toContain("is empty");
    const run = await runSettleCli(["retention", "run"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("Nothing has left retention.");

    await call(ingest, {
      key: t.key,
      body: {
        records: [
          {
            event_id: "r-1",
            task_id: "t",
            invocation_id: "i-1",
            tool: "create_invoice",
            phase: "intent",
            at: new Date().toISOString(),
          },
        ],
      },
    });
    const rows = await (
      await db()
    ).driver.query<{ line: string }>(`SELECT row_to_json(a)::text AS line FROM attempts a`);
    const at = new Date().toISOString();
    await writeArchive(
      dir,
      "attempts_p2026_01.jsonl.gz",
      { table: "attempts", source: "attempts_p2026_01", shelf: "2026-01-01", archived_at: at, migration: null },
      (async function* () {
        yield rows.map((r) => r.line);
      })(),
    );
    const listed = await runSettleCli(["archive", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/attempts_p2026_01\.jsonl\.gz\s+attempts\s+2026-01\s+1\s+\d+ KiB\s+.*ok/);

    const scratch = path.join(dir, "investigation");
    const restored = await runSettleCli([
      "archive",
      "restore",
      path.join(dir, "attempts_p2026_01.jsonl.gz"),
      "--into",
      scratch,
    ]);
    expect(restored.stderr).toBe("");
    expect(restored.stdout).toContain("Restored 1 row of attempts (from attempts_p2026_01)");

    const file = path.join(dir, "attempts_p2026_01.jsonl.gz");
    const bytes = readFileSync(file);
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0xff;
    writeFileSync(file, bytes);
    const damaged = await runSettleCli(["archive", "list"]);
    expect(damaged.code).toBe(1);
    expect(damaged.stdout).toContain("damaged");
    const refused = await runSettleCli(["archive", "restore", file, "--into", scratch]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("does not match the SHA-256 its manifest lists");
  });
});
