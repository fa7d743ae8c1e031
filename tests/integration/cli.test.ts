import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTagOf } from "@/cli/simulate/plan";
import { errorResponse } from "@/lib/http/route";
import { closeDb } from "@/lib/db/client";
import { readMigrations } from "@/lib/db/migrate";
import { env, setEnv } from "@/lib/env";
import { createDatabase, openSettle, type TestContext, runSettleCli } from "./harness";
import { startServer, type TestServer } from "./http-server";

// The CLI run in-process (runCli with captured stdout/stderr) against
// PostgreSQL and a real HTTP server serving the route handlers; one test
// spawns the real launcher on an embedded database.

const settle = runSettleCli;

async function api(server: TestServer, key: string, pathname: string, init: RequestInit = {}) {
  const res = await fetch(`${server.url}${pathname}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...init.headers },
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const record = (i: number) =>
  JSON.stringify({
    event_id: `cli-${i}`,
    task_id: `ord-${Math.floor(i / 2)}`,
    invocation_id: `inv-cli-${Math.floor(i / 2)}`,
    attempt: 1,
    tool: "create_order",
    phase: i % 2 === 0 ? "intent" : "outcome",
    at: new Date(Date.UTC(2026, 10, 29, 5, 0, i % 60)).toISOString(),
    effect_class: "create",
    ...(i % 2 === 0 ? {} : { envelope: { outcome: "ok", effect_applied: "yes" } }),
  });

const KEY_LINE = /^stl_rk_[a-z0-9]{8}_[A-Za-z0-9]{32}\n$/;

describe("settle CLI", () => {
  let t: TestContext;
  let server: TestServer;
  let databaseUrl: string;
  let dir: string;

  beforeAll(async () => {
    t = await openSettle("postgres");
    databaseUrl = env().DATABASE_URL!;
    server = await startServer();
    dir = mkdtempSync(path.join(tmpdir(), "settle-cli-"));
  });

  afterAll(async () => {
    await server?.close();
    await t?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("prints usage for --help and one clear line for bad input, never a stack", async () => {
    const help = await settle(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: settle <command>");
    for (const name of ["keys create", "keys list", "keys revoke", "migrate", "ingest", "simulate"])
      expect(help.stdout).toContain(name);

    const keysHelp = await settle(["keys", "--help"]);
    expect(keysHelp.code).toBe(0);
    expect(keysHelp.stdout).toContain("Usage: settle keys <command>");
    expect((await settle(["keys", "create", "--help"])).stdout).toMatch(/^Usage: settle keys create <runtime>/);

    const bad: Array<[string[], RegExp]> = [
      [["keys"], /Usage: settle keys/],
      [["launch"], /unknown command 'launch'/],
      [["keys", "create"], /missing <runtime>/],
      [["keys", "list", "--colour"], /Unknown option '--colour'/],
      [
        ["ingest", path.join(dir, "missing.jsonl"), "--url", server.url, "--key", t.key],
        /missing\.jsonl: no such file/,
      ],
      [["ingest", "x.jsonl", "--url", "not a url", "--key", t.key], /--url 'not a url' is not a URL/],
      [["simulate", "--url", server.url], /--key is required/],
      [
        ["simulate", "--url", server.url, "--key", t.key, "--tasks", "-3"],
        /--tasks needs a value; to give one that starts with '-', write --tasks=<value>/,
      ],
      [
        ["simulate", "--url", server.url, "--key", t.key, "--tasks=-3"],
        /--tasks must be a whole number from 1 to 100000, not '-3'/,
      ],
      [
        ["ingest", "x.jsonl", "--url", server.url, "--key", t.key, "--batch", "501"],
        /--batch must be a whole number from 1 to 500/,
      ],
    ];
    for (const [argv, message] of bad) {
      const run = await settle(argv);
      expect(run.code, argv.join(" ")).toBe(1);
      expect(run.stderr, argv.join(" ")).toMatch(message);
      expect(run.stderr, argv.join(" ")).not.toMatch(/\n\s+at /);
      expect(run.stdout).toBe("");
    }
  });

  it("keys create prints only the key; list shows it; a revoked key gets 401 from ingest", async () => {
    const created = await settle(["keys", "create", "billing-agent", "--name", "prod"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(KEY_LINE);
    expect(created.stderr).toContain("shown only once");
    const key = created.stdout.trim();
    const prefix = key.slice(0, 15);

    const list = await settle(["keys", "list"]);
    expect(list.stdout.split("\n")[0]).toMatch(/^PREFIX\s+RUNTIME\s+NAME\s+CREATED\s+LAST USED\s+REVOKED$/);
    expect(list.stdout).toMatch(
      new RegExp(`${prefix}\\s+billing-agent\\s+prod\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+-\\s+-`),
    );
    expect(list.stdout).not.toContain(key);

    const accepted = await api(server, key, "/api/v1/envelopes", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: record(1),
    });
    expect(accepted.status).toBe(207);

    const revoked = await settle(["keys", "revoke", prefix]);
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked key ${prefix} (runtime billing-agent, name prod).\n` });
    expect((await settle(["keys", "revoke", prefix])).stdout).toContain("was already revoked");
    const unknown = await settle(["keys", "revoke", "stl_rk_00000000"]);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: "settle keys revoke: no key with prefix stl_rk_00000000 (see: settle keys list)\n",
    });

    const json = JSON.parse((await settle(["keys", "list", "--json"])).stdout) as Array<{
      prefix: string;
      revoked_at: string | null;
      last_used_at: string | null;
    }>;
    expect(json.find((k) => k.prefix === prefix)).toMatchObject({
      revoked_at: expect.any(String),
      last_used_at: expect.any(String),
    });

    const log = path.join(dir, "one.jsonl");
    writeFileSync(log, `${record(2)}\n`);
    const refused = await settle(["ingest", log, "--url", server.url, "--key", key]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("Settle refused the key: HTTP 401 KEY_REVOKED");
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });

  it("migrate applies pending migrations to a fresh database and records them as Prisma does", async () => {
    const fresh = await createDatabase();
    try {
      setEnv({ DATABASE_URL: fresh.url });
      const first = await settle(["migrate"]);
      expect(first.code).toBe(0);
      const migrations = readMigrations();
      expect(first.stdout).toBe(
        `${migrations.map((m) => `Applied ${m.name}\n`).join("")}${migrations.length} applied, 0 already applied.\n`,
      );

      const again = await settle(["migrate"]);
      expect(again.stdout).toBe(`Database is up to date (${migrations.length} already applied).\n`);

      const client = new pg.Client({ connectionString: fresh.url });
      await client.connect();
      const { rows } = await client.query(`SELECT * FROM "_prisma_migrations" ORDER BY started_at`);
      await client.end();
      expect(rows).toHaveLength(migrations.length);
      for (const [i, m] of migrations.entries()) {
        const sql = readFileSync(path.join("prisma", "migrations", m.name, "migration.sql"));
        expect(rows[i]).toMatchObject({
          migration_name: m.name,
          checksum: createHash("sha256").update(sql).digest("hex"),
          applied_steps_count: 1,
          rolled_back_at: null,
          logs: null,
        });
        expect(rows[i].id).toMatch(/^[0-9a-f-]{36}$/);
        expect(rows[i].finished_at).toBeInstanceOf(Date);
      }
    } finally {
      setEnv({ DATABASE_URL: databaseUrl });
      await fresh.drop();
    }
  });

  it("ingest sends a log in batches under 500 records and 1 MiB, reports each rejected line, and re-runs as duplicates", async () => {
    const lines = Array.from({ length: 1150 }, (_, i) => record(1000 + i));
    lines.splice(16, 0, "{not json");
    lines.splice(40, 0, "");
    lines.splice(700, 0, JSON.stringify({ event_id: "no-task", tool: "create_order" }));
    lines.push(
      JSON.stringify({
        event_id: "huge",
        task_id: "t",
        invocation_id: "i",
        tool: "t",
        envelope: { blob: "x".repeat(1100 * 1024) },
      }),
    );
    const log = path.join(dir, "attempts.jsonl");
    writeFileSync(log, `${lines.join("\n")}\n`);

    const before = server.requests.length;
    const run = await settle(["ingest", log, "--url", server.url, "--key", t.key]);
    expect(run.code).toBe(1);
    const posts = server.requests.slice(before).filter((r) => r.method === "POST");
    // 1,152 lines sent (the blank one is skipped, the huge one never leaves): 500 + 500 + 152.
    expect(posts).toHaveLength(3);
    expect(
      posts.every((p) => p.contentType === "application/x-ndjson" && p.bytes <= 1024 * 1024 && p.status === 207),
    ).toBe(true);
    expect(run.stdout).toContain("  accepted    1,150\n  duplicates  0\n  rejected    3\n");
    expect(run.stdout).toContain("Rejected records (3):");
    expect(run.stdout).toMatch(/line 17: INVALID_JSON /);
    expect(run.stdout).toMatch(/line 701: MISSING_REQUIRED_FIELD /);
    expect(run.stdout).toMatch(/line 1154: LINE_TOO_LARGE Not sent: the line is 1\.07 MiB/);
    expect(run.stderr).toMatch(/ingest: 1,153 records sent \(100%\): 1,150 accepted, 0 duplicates, 3 rejected/);

    const inv = await api(server, t.key, "/api/v1/invocations/inv-cli-600");
    expect(inv.body).toMatchObject({ status: "succeeded", attempt_count: 1 });

    const again = await settle(["ingest", log, "--url", server.url, "--key", t.key, "--batch", "400"]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("  accepted    0\n  duplicates  1,150\n  rejected    3\n");
    expect(again.stdout).toMatch(/1,153 records in 3 requests/);

    const clean = path.join(dir, "clean.jsonl");
    // Six records of ~300 KB: three fit in 1 MiB, so the byte limit splits them before the count does.
    writeFileSync(
      clean,
      Array.from({ length: 6 }, (_, i) =>
        JSON.stringify({
          event_id: `big-${i}`,
          task_id: "big",
          invocation_id: `inv-big-${i}`,
          tool: "t",
          envelope: { note: "y".repeat(300 * 1024) },
        }),
      ).join("\n"),
    );
    const mark = server.requests.length;
    const ok = await settle(["ingest", clean, "--url", server.url, "--key", t.key]);
    expect(ok.code).toBe(0);
    expect(server.requests.slice(mark).filter((r) => r.method === "POST")).toHaveLength(2);
  });

  it("ingest waits for a 429's not_before and resends the same batch; gives up with exit 2 on a server that stays down", async () => {
    const log = path.join(dir, "retry.jsonl");
    writeFileSync(log, [record(5000), record(5001)].join("\n"));
    let posts = 0;
    server.intercept(({ method }) =>
      method === "POST" && ++posts === 1 ? errorResponse("RATE_LIMITED", "Slow down.", "req_test") : null,
    );
    const limited = await settle(["ingest", log, "--url", server.url, "--key", t.key]);
    expect(limited.code).toBe(0);
    expect(limited.waits).toHaveLength(1);
    expect(limited.waits[0]).toBeGreaterThan(0);
    expect(limited.waits[0]).toBeLessThanOrEqual(1_000);
    expect(limited.stderr).toContain("HTTP 429 RATE_LIMITED");
    expect(limited.stdout).toContain("  accepted    2\n");

    server.intercept(({ method }) =>
      method === "POST" ? errorResponse("DATABASE_UNAVAILABLE", "Database down.", "req_test") : null,
    );
    const down = await settle(["ingest", log, "--url", server.url, "--key", t.key, "--retries", "2"]);
    server.intercept(null);
    expect(down.code).toBe(2);
    expect(down.waits).toHaveLength(2);
    expect(down.stderr).toContain("gave up after 3 attempts: HTTP 503 DATABASE_UNAVAILABLE");

    const unreachable = await settle([
      "ingest",
      log,
      "--url",
      `http://127.0.0.1:${await closedPort()}`,
      "--key",
      t.key,
    ]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/cannot reach Settle at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    expect(unreachable.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("simulate plays every scenario against the API, and every check passes", async () => {
    const seed = 20261129;
    const run = await settle([
      "simulate",
      "--url",
      server.url,
      "--key",
      t.key,
      "--tasks",
      "60",
      "--seed",
      String(seed),
    ]);
    expect(run.stdout).not.toContain("FAIL");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^(\d+) passed, 0 failed/m);
    const passed = run.stdout.split("\n").filter((l) => l.startsWith("PASS  "));
    expect(passed.length).toBeGreaterThanOrEqual(30);
    for (const fixture of [1, 2, 3, 4, 5, 6])
      expect(run.stdout).toContain(`PASS  source article 002 (docs/outcome-model.md) fixture ${fixture}`);
    expect(run.stdout).toContain("PASS  source article 004 (docs/outcome-model.md) fault test");
    expect(run.stdout).toContain("PASS  every dialect of docs/outcome-model.md §3 was detected (10)");

    // What the read API shows for the fixtures' tasks, numbered in the order they are played.
    const tag = runTagOf(seed);
    const task = async (prefix: string, n: number) =>
      (await api(server, t.key, `/api/v1/tasks/${prefix}-${tag}-${String(n).padStart(4, "0")}`)).body;
    const byTool = (body: any, tool: string) => body.invocations.find((i: any) => i.tool === tool);
    expect(byTool(await task("ord", 1), "create_order")).toMatchObject({
      status: "reconciled",
      commit_state: "committed",
      resolution: { by: "probe", commit_state: "committed" },
    });
    expect((await task("rpt", 5)).invocations.map((i: any) => i.status).sort()).toEqual([
      "partially_applied",
      "succeeded",
    ]);
    expect(byTool(await task("sms", 6), "send_sms")).toMatchObject({ status: "succeeded", attempt_count: 2 });
    const refund = byTool(await task("rfd", 8), "create_refund");
    expect(refund).toMatchObject({ status: "outcome_unknown", next_action: "verify_operation", attempt_count: 1 });
    const detail = await api(server, t.key, `/api/v1/invocations/${encodeURIComponent(refund.invocation_id)}`);
    expect(detail.body.attempts.find((a: any) => a.phase === "outcome")).toMatchObject({
      dialect: "seed004",
      dispatch_stage: "evidence_failed",
      retry: { directive: "never" },
    });
    expect(byTool(await task("gdpr", 9), "delete_record")).toMatchObject({
      status: "stalled",
      next_action: "verify_operation",
    });

    // The same seed again: the same records, so Settle answers duplicate and nothing changes.
    const replay = await settle([
      "simulate",
      "--url",
      server.url,
      "--key",
      t.key,
      "--tasks",
      "60",
      "--seed",
      String(seed),
    ]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(/Settle answered \d+ requests?: \d+ accepted, [\d,]+ duplicates, 1 rejected/);
    expect(replay.stdout).not.toContain("FAIL");
  });

  it("the bin launcher runs the CLI: keys create on the embedded database prints exactly one key line", async () => {
    const dataDir = path.join(dir, "embedded");
    const child = spawn(process.execPath, ["bin/settle.mjs", "keys", "create", "launcher-test"], {
      env: { ...process.env, DATABASE_URL: "", SETTLE_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toContain(`the embedded database in ${dataDir}`);
    expect(code).toBe(0);
    expect(stdout).toMatch(KEY_LINE);

    // The key is in that data directory: the in-process CLI, pointed at it, lists it.
    await closeDb();
    setEnv({ DATABASE_URL: undefined, SETTLE_DATA_DIR: dataDir });
    try {
      const list = await settle(["keys", "list"]);
      expect(list.stdout).toContain(`${stdout.slice(0, 15)}  launcher-test`);

      // While another live process holds the directory, the CLI says so instead of opening it.
      writeFileSync(`${dataDir}.lock`, String(process.ppid));
      const busy = await settle(["keys", "list"]);
      expect(busy.code).toBe(2);
      expect(busy.stderr).toMatch(
        new RegExp(
          `^settle keys list: The embedded database in ${dataDir} is open in another process \\(pid ${process.ppid}`,
        ),
      );
      rmSync(`${dataDir}.lock`);
    } finally {
      setEnv({ DATABASE_URL: databaseUrl, SETTLE_DATA_DIR: undefined });
    }
  });
});
