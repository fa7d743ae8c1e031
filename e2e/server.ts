import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

// Two servers, both `npm start` (bin/settle-server.mjs) of the same build:
// - "embedded": Settle as a new user meets it, on an empty embedded database,
//   whose first-run banner prints the "local" runtime key and an admin.
// - "console": Settle on a fresh PostgreSQL database, so tests can create
//   people, keys and records with the CLI while the server runs.

/** SETTLE_E2E_OUT lets two e2e runs share a machine without sharing their files. */
export const OUT_DIR = process.env.SETTLE_E2E_OUT || "test-results";
export const STATE_FILE = path.join(process.cwd(), OUT_DIR, "e2e-state.json");
export const PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres";

export type EmbeddedState = {
  baseURL: string;
  key: string;
  adminEmail: string;
  adminPassword: string;
  pid: number;
  dataDir: string;
  banner: string;
};
export type ConsoleState = {
  baseURL: string;
  key: string;
  adminEmail: string;
  adminPassword: string;
  pid: number;
  databaseUrl: string;
  databaseName: string;
};
export type E2EState = { embedded: EmbeddedState; console: ConsoleState };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export function startNext(port: number, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    [path.join("bin", "settle-server.mjs"), "-p", String(port), "-H", "127.0.0.1"],
    {
      // Background jobs every second, so specs that wait on one (webhook deliveries) wait less.
      env: {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: "1",
        PORT: String(port),
        SETTLE_PUBLIC_URL: `http://127.0.0.1:${port}`,
        SETTLE_JOBS_INTERVAL_S: "1",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  return { child, output: () => output };
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null>,
  output: () => string,
  child: ChildProcess,
): Promise<T> {
  // Three minutes: a first start (migrations, the embedded database) took over a minute on a loaded machine.
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGTERM");
  throw new Error(`${what} within 180 s. Output:\n${output()}`);
}

export const healthy = async (baseURL: string) => (await fetch(`${baseURL}/api/health`)).ok;

export async function startEmbedded(): Promise<EmbeddedState> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), "settle-e2e-"));
  const { child, output } = startNext(port, { SETTLE_DATA_DIR: path.join(dataDir, "data"), DATABASE_URL: "" });
  const baseURL = `http://127.0.0.1:${port}`;
  return waitFor(
    "Settle did not start with a first-run key and admin",
    async () => {
      const text = output();
      const key = /stl_rk_[a-z0-9]{8}_[A-Za-z0-9]{32}/.exec(text)?.[0];
      const adminEmail = /email:\s+(\S+)/.exec(text)?.[1];
      const adminPassword = /password:\s+(\S+)/.exec(text)?.[1];
      if (!key || !adminEmail || !adminPassword || !(await healthy(baseURL))) return null;
      return { baseURL, key, adminEmail, adminPassword, pid: child.pid!, dataDir, banner: text };
    },
    output,
    child,
  );
}

/** Runs the `settle` CLI against the console server's database; returns stdout. */
export function settleCli(databaseUrl: string, args: string[]): string {
  const run = spawnSync(process.execPath, ["bin/settle.mjs", ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`settle ${args.join(" ")} failed (${run.status}): ${run.stderr}`);
  return run.stdout.trim();
}

export async function startConsole(): Promise<ConsoleState> {
  const databaseName = `settle_e2e_${randomBytes(6).toString("hex")}`;
  const psql = spawnSync("psql", [PG_ADMIN_URL, "-qc", `CREATE DATABASE ${databaseName}`], { encoding: "utf8" });
  if (psql.status !== 0) throw new Error(`could not create ${databaseName}: ${psql.stderr}`);
  const databaseUrl = `postgresql://postgres@127.0.0.1:5432/${databaseName}`;
  settleCli(databaseUrl, ["migrate"]);
  const adminEmail = "admin@example.com";
  const adminPassword = "e2e admin password";
  settleCli(databaseUrl, ["users", "create", "--email", adminEmail, "--role", "admin", "--password", adminPassword]);
  const key = settleCli(databaseUrl, ["keys", "create", "billing-agent"]);
  const port = await freePort();
  const { child, output } = startNext(port, {
    DATABASE_URL: databaseUrl,
    SETTLE_AUTH_SECRET: randomBytes(24).toString("hex"),
    SETTLE_SIGN_IN_RATE_LIMIT: "1000",
    SETTLE_WEBHOOK_ALLOW_PRIVATE: "1",
  });
  const baseURL = `http://127.0.0.1:${port}`;
  await waitFor(
    "The console server did not become healthy",
    async () => ((await healthy(baseURL)) ? true : null),
    output,
    child,
  );
  return { baseURL, key, adminEmail, adminPassword, pid: child.pid!, databaseUrl, databaseName };
}

export function readState(): E2EState {
  return JSON.parse(readFileSync(STATE_FILE, "utf8")) as E2EState;
}

export function writeState(state: E2EState): void {
  writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
}

/**
 * One more server of the same build on the console's database with the fast lane off
 * (SETTLE_FAST_LANE=off): every request through Next.js, to compare with `npm start` as shipped.
 */
export async function startThroughNext(databaseUrl: string): Promise<{ baseURL: string; stop: () => void }> {
  return startAnother(databaseUrl, { SETTLE_FAST_LANE: "off" });
}

/** One more server of the same build on the console's database, with settings of its own (no background jobs). */
export async function startAnother(
  databaseUrl: string,
  env: Record<string, string>,
): Promise<{ baseURL: string; pid: number; output: () => string; stop: () => void }> {
  const port = await freePort();
  const { child, output } = startNext(port, {
    DATABASE_URL: databaseUrl,
    SETTLE_AUTH_SECRET: randomBytes(24).toString("hex"),
    SETTLE_BACKGROUND_JOBS: "off",
    ...env,
  });
  const baseURL = `http://127.0.0.1:${port}`;
  await waitFor(
    `The server with ${JSON.stringify(env)} did not become healthy`,
    async () => ((await healthy(baseURL)) ? true : null),
    output,
    child,
  );
  return {
    baseURL,
    pid: child.pid!,
    output,
    stop: () => {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        /* already gone */
      }
    },
  };
}
