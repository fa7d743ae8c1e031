import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

// The e2e server is Settle as a new user meets it: `next start` on an empty
// embedded database, whose first-run banner prints the "local" runtime key.

export const STATE_FILE = path.join(process.cwd(), "test-results", "e2e-state.json");
export type E2EState = { baseURL: string; key: string; adminEmail: string; adminPassword: string; pid: number; dataDir: string; banner: string };

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startSettle(): Promise<{ state: E2EState; child: ChildProcess }> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), "settle-e2e-"));
  const child = spawn(path.join("node_modules", ".bin", "next"), ["start", "-p", String(port)], {
    env: {
      ...process.env,
      SETTLE_DATA_DIR: dataDir,
      DATABASE_URL: "",
      NEXT_TELEMETRY_DISABLED: "1",
      PORT: String(port),
      SETTLE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const key = /stl_rk_[a-z0-9]{8}_[A-Za-z0-9]{32}/.exec(output)?.[0];
    const adminEmail = /email:\s+(\S+)/.exec(output)?.[1];
    const adminPassword = /password:\s+(\S+)/.exec(output)?.[1];
    if (key && adminEmail && adminPassword) {
      const baseURL = `http://127.0.0.1:${port}`;
      const res = await fetch(`${baseURL}/api/health`).catch(() => null);
      if (res?.ok) return { state: { baseURL, key, adminEmail, adminPassword, pid: child.pid!, dataDir, banner: output }, child };
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGTERM");
  throw new Error(`Settle did not start with a first-run key within 60 s. Output:\n${output}`);
}

export function readState(): E2EState {
  return JSON.parse(readFileSync(STATE_FILE, "utf8")) as E2EState;
}

export function writeState(state: E2EState): void {
  writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
}
