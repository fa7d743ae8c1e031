import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

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

  beforeAll(async () => {
    const deadline = Date.now() + 90_000;
    while (!output.includes("ready")) {
      if (Date.now() > deadline || holder.exitCode !== null) throw new Error(`the holder did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(() => {
    if (holder.exitCode === null) holder.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

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
