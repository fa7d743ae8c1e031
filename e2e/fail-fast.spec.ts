import { spawn } from "node:child_process";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { readState } from "./server";

// `npm start` with a setting missing or malformed stops at once with one line
// saying what to do, instead of printing "Ready" and failing every page.

function start(env: Record<string, string>): Promise<{ code: number | null; output: string; listened: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join("bin", "settle-server.mjs"), "-p", "0", "-H", "127.0.0.1"], {
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", SETTLE_BACKGROUND_JOBS: "off", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output, listened: /Settle ready on/.test(output) });
    });
  });
}

test.describe("fail fast on settings", () => {
  test.describe.configure({ timeout: 60_000 });

  test("PostgreSQL in production without SETTLE_AUTH_SECRET: exits 1 before listening, saying what to set", async () => {
    const { databaseUrl } = readState().console;
    const run = await start({ DATABASE_URL: databaseUrl, NODE_ENV: "production", SETTLE_AUTH_SECRET: "" });
    expect(run.code).toBe(1);
    expect(run.listened).toBe(false);
    const lines = run.output.split("\n").filter((l) => l.startsWith("Settle cannot start:"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("SETTLE_AUTH_SECRET is not set");
    expect(lines[0]).toContain("openssl rand -base64 32");
  });

  test("a malformed setting (SETTLE_TRUSTED_PROXIES) names the setting and the value", async () => {
    const { databaseUrl } = readState().console;
    const run = await start({
      DATABASE_URL: databaseUrl,
      SETTLE_AUTH_SECRET: "x".repeat(40),
      SETTLE_TRUSTED_PROXIES: "10.0.0.0/8, proxy.internal",
    });
    expect(run.code).toBe(1);
    expect(run.listened).toBe(false);
    expect(run.output).toMatch(
      /Settle cannot start: Settle's settings are invalid: SETTLE_TRUSTED_PROXIES: "proxy\.internal" is not an IP address or CIDR/,
    );
  });
});
