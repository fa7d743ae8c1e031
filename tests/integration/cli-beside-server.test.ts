import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setEnv } from "@/lib/env";
import { writeArchive } from "@/lib/retention/archive";
import { runSettleCli } from "./harness";

// The CLI beside a running server on the embedded database (decision 032):
// the server holds the data directory and serves it on a socket; each command
// works through it while the server keeps writing, and a command that cannot
// reach any database says so in one line and exits non-zero, so
// `KEY=$(settle keys create …)` never silently holds nothing.

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), "settle-beside-"));
const dataDir = join(dir, "data");
const baseEnv: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: "",
  SETTLE_DATA_DIR: dataDir,
  NODE_ENV: "development",
};

function settle(args: string[], env: NodeJS.ProcessEnv = baseEnv) {
  const run = spawnSync(process.execPath, ["bin/settle.mjs", ...args], { cwd: root, env, encoding: "utf8" });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("the CLI beside a server that holds the embedded database", () => {
  const holder = spawn(
    process.execPath,
    ["--import", "./scripts/server-only-off.mjs", "--import", "tsx", "tests/integration/embedded-holder.ts"],
    { cwd: root, env: baseEnv, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  holder.stdout.on("data", (d) => (output += d));
  holder.stderr.on("data", (d) => (output += d));
  let serverUrl = "";

  beforeAll(async () => {
    const deadline = Date.now() + 90_000;
    while (!/ready (\S+)\n/.test(output)) {
      if (Date.now() > deadline || holder.exitCode !== null) throw new Error(`the holder did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    serverUrl = /ready (\S+)\n/.exec(output)![1]!;
  });
  afterAll(() => {
    if (holder.exitCode === null) holder.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs every command of the CLI beside it, each within seconds", async () => {
    const archiveDir = join(dir, "archive");
    // As a user's shell beside `npm run dev`: no PORT, no public address, a loopback channel allowed.
    setEnv({
      DATABASE_URL: undefined,
      SETTLE_DATA_DIR: dataDir,
      SETTLE_ARCHIVE_DIR: archiveDir,
      SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
      SETTLE_PUBLIC_URL: undefined,
      PORT: undefined,
    });
    const ran: string[] = [];
    const cli = async (...argv: string[]) => {
      const started = Date.now();
      const run = await runSettleCli(argv);
      const seconds = (Date.now() - started) / 1000;
      ran.push(argv.slice(0, 2).join(" "), argv[0]!);
      expect(seconds, `settle ${argv.join(" ")} took ${seconds} s`).toBeLessThan(30);
      return run;
    };
    const ok = async (...argv: string[]) => {
      const run = await cli(...argv);
      expect(run.code, `settle ${argv.join(" ")}: ${run.stderr}`).toBe(0);
      return run.stdout.trim();
    };

    const key = await ok("keys", "create", "rt-cli");
    expect(await ok("keys", "list")).toContain("rt-cli");
    await ok("users", "create", "--email", "cli-admin@example.com", "--role", "admin");
    // The link points at the running server, which noted its address, not at a port the CLI guessed.
    const link = await ok("users", "reset-password", "--email", "cli-admin@example.com", "--link");
    expect(link.startsWith(`${serverUrl}/reset-password?token=`), link).toBe(true);
    expect(await ok("users", "reset-password", "--email", "cli-admin@example.com")).toMatch(/^\S{12,}$/);
    expect(await ok("tokens", "create", "--email", "cli-admin@example.com")).toMatch(/^stl_pat_/);
    await ok("catalog", "set", "rt-cli", "charge_*", "money");
    expect(await ok("catalog", "list", "--runtime", "rt-cli")).toContain("charge_*");
    await ok("catalog", "remove", "rt-cli", "charge_*");
    await ok("notifications", "add", "slack", "http://127.0.0.1:9/hook");
    const channels = JSON.parse(await ok("notifications", "list", "--json")) as Array<{ id: string }>;
    await ok("notifications", "remove", channels[0]!.id);
    await ok("retention", "show");
    await ok("retention", "set", "--attempts-days", "400", "--audit-days", "400", "--runtime", "rt-cli");
    await ok("retention", "reset", "rt-cli");
    await ok("retention", "run");
    await ok("migrate");

    // An archived month of guard answers, restored into the live database through the server.
    await writeArchive(
      archiveDir,
      "guard_checks_p2026_01.jsonl.gz",
      {
        table: "guard_checks",
        source: "guard_checks_p2026_01",
        shelf: "2026-01-01",
        archived_at: new Date().toISOString(),
        migration: null,
      },
      (async function* () {
        yield [
          JSON.stringify({
            id: "00000000-0000-4000-8000-00000000000a",
            runtime_id: "00000000-0000-4000-8000-00000000000b",
            task_id: "old-task",
            invocation_id: "old-inv",
            tool: "create_order",
            idempotency_key: "old-key",
            allow: true,
            reason: null,
            at: "2026-01-15T10:00:00.000Z",
            shelf: "2026-01-01",
          }),
        ];
      })(),
    );
    expect(await ok("archive", "list")).toContain("guard_checks_p2026_01.jsonl.gz");
    expect(
      await ok("archive", "restore", join(archiveDir, "guard_checks_p2026_01.jsonl.gz"), "--into", dataDir),
    ).toContain("Restored 1 row");

    const dump = join(dir, "dump.jsonl.gz");
    await ok("export", dump);
    // The running server's database holds data: import refuses it in one line, and loads into an empty one.
    const refused = await cli("import", dump);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds|empty|data/);
    // Into a new embedded database (made and migrated first: not beside the server, so not timed).
    setEnv({ SETTLE_DATA_DIR: join(dir, "restored") });
    const restored = await runSettleCli(["import", dump]);
    expect(restored.stdout, restored.stderr).toContain("Imported");
    setEnv({ SETTLE_DATA_DIR: dataDir });

    const log = join(dir, "log.jsonl");
    const line = { task_id: "cli-1", invocation_id: "cli-1", tool: "create_order", envelope: { ok: true } };
    writeFileSync(log, `${JSON.stringify(line)}\n`);
    await ok("ingest", log, "--url", serverUrl, "--key", key);
    await ok("simulate", "--url", serverUrl, "--key", key, "--tasks", "3", "--seed", "7");
    // The trail written meanwhile is whole, and a task's evidence leaves and checks offline.
    await ok("audit", "verify");
    expect(await ok("evidence", "key")).not.toBe("");
    const bundle = join(dir, "evidence.json");
    await ok("evidence", "export", "--task", "cli-1", "--out", bundle);
    await ok("evidence", "verify", bundle);
    await ok("keys", "revoke", key.split("_").slice(0, 3).join("_"));

    // Every command the CLI has ran above.
    const { commandNames } = await import("@/cli/main");
    expect(commandNames().filter((name) => !ran.includes(name))).toEqual([]);
  }, 300_000);

  it("creates a key, a user and a catalog entry while the server writes, and the server sees them", async () => {
    const key = settle(["keys", "create", "my-agent"]);
    expect(key.stderr).toContain("Created key");
    expect(key).toMatchObject({ code: 0 });
    expect(key.stdout.trim()).toMatch(/^stl_rk_[a-z0-9]{8}_[A-Za-z0-9]+$/);

    const user = settle(["users", "create", "--email", "ops@example.com", "--role", "operator"]);
    expect(user.code).toBe(0);
    expect(user.stdout.trim()).toMatch(/^\S{12,}$/);

    const entry = settle(["catalog", "set", "my-agent", "charge_*", "money"]);
    expect(entry.code).toBe(0);

    const keys = settle(["keys", "list"]);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toContain("my-agent");
    expect(keys.stdout).toContain("holder");
    const catalog = settle(["catalog", "list", "--runtime", "my-agent"]);
    expect(catalog.stdout).toContain("charge_*");

    // The server's own writes went on meanwhile, none of them failed or landed in a command's transaction.
    holder.kill("SIGTERM");
    await new Promise((r) => holder.once("exit", r));
    const report = JSON.parse(output.trim().split("\n").at(-1)!) as { batches: number; errors: string[] };
    expect(report.errors).toEqual([]);
    expect(report.batches).toBeGreaterThan(5);
  }, 120_000);

  it("exits non-zero with one line on stderr and nothing on stdout when no database can be reached", () => {
    const down = settle(["keys", "create", "my-agent"], {
      ...baseEnv,
      DATABASE_URL: "postgresql://postgres@127.0.0.1:1/settle",
    });
    expect(down.code).toBe(2);
    expect(down.stdout).toBe("");
    expect(down.stderr.trim().split("\n")).toHaveLength(1);
    expect(down.stderr).toMatch(/cannot use the database/);

    // A data directory held by a live process that serves nothing (an older Settle): the same, and it says who.
    const held = join(dir, "held");
    writeFileSync(`${held}.lock`, String(process.pid));
    const busy = settle(["users", "create", "--email", "x@example.com", "--role", "viewer"], {
      ...baseEnv,
      SETTLE_DATA_DIR: held,
    });
    expect(busy.code).toBe(2);
    expect(busy.stdout).toBe("");
    expect(busy.stderr.trim().split("\n")).toHaveLength(1);
    expect(busy.stderr).toMatch(new RegExp(`open in another process \\(pid ${process.pid}`));
  }, 60_000);
});
