import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";
import http from "node:http";
import { expect, test, type Page } from "@playwright/test";
import { earlyThenOrdinary, viaAgent, viaFetch } from "./keep-alive";

// `npm run dev` as a new user meets it, without SETTLE_PUBLIC_URL: sign-in must
// work at localhost, 127.0.0.1 and the LAN address `next dev` prints, and a
// password must never reach a URL — not even when the page's scripts are missing.

test.describe.configure({ mode: "serial", timeout: 240_000 });

let dev: ChildProcess | undefined;
let output = "";
let port = 0;
let password = "";
let dataDir = "";
const distDir = ".next-e2e-dev";
// `next dev` adds its types folder to tsconfig.json; the checkout keeps its own.
const tsconfig = readFileSync("tsconfig.json", "utf8");

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, () => {
      const { port: p } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(p));
    });
  });
}

function lanAddress(): string | null {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return null;
}

test.beforeAll(async () => {
  // Its own wait below is up to 180 s (a first compile on a loaded machine); the hook's default is 30 s.
  test.setTimeout(240_000);
  port = await freePort();
  dataDir = mkdtempSync(path.join(tmpdir(), "settle-e2e-dev-"));
  // Settings as a new user has them: no public address, no port, no NODE_ENV.
  const { SETTLE_PUBLIC_URL: _url, NODE_ENV: _mode, PORT: _port, ...inherited } = process.env;
  const env = {
    ...inherited,
    NEXT_TELEMETRY_DISABLED: "1",
    SETTLE_DATA_DIR: path.join(dataDir, "data"),
    SETTLE_NEXT_DIST_DIR: distDir,
    DATABASE_URL: "",
  };
  const child = spawn(process.execPath, ["node_modules/next/dist/bin/next", "dev", "-p", String(port)], {
    env: env as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  dev = child;
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline && !password) {
    // The banner comes once instrumentation has opened the database: ask for a page to get there.
    await fetch(`http://localhost:${port}/api/health`).catch(() => null);
    password = /password:\s+(\S+)/.exec(output)?.[1] ?? "";
    if (!password) await new Promise((r) => setTimeout(r, 500));
  }
  if (!password) throw new Error(`next dev did not print a first-run admin:\n${output}`);
});

test.afterAll(async () => {
  if (dev?.pid && dev.exitCode === null && dev.signalCode === null) {
    // Wait for it to go: a dev server still writing its build folder makes removing it fail (ENOTEMPTY).
    const exited = new Promise((resolve) => dev!.once("exit", resolve));
    try {
      process.kill(-dev.pid, "SIGTERM");
    } catch {
      /* already gone */
    }
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  writeFileSync("tsconfig.json", tsconfig);
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  rmSync(distDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

/** Every URL the page asked for, and the address bar's. */
function recordUrls(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (r) => urls.push(r.url()));
  page.on("framenavigated", (f) => urls.push(f.url()));
  return urls;
}

const hosts = () => ["localhost", "127.0.0.1", ...(lanAddress() ? [lanAddress()!] : [])];

test("sign-in works at localhost, 127.0.0.1 and the LAN address, and the password is in no URL", async ({
  browser,
}) => {
  for (const host of hosts()) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const urls = recordUrls(page);
    const base = `http://${host}:${port}`;
    await page.goto(`${base}/sign-in`, { timeout: 120_000 });
    await page.getByLabel("Email").fill("admin@settle.local");
    await page.getByLabel("Password").fill(password);
    await page.getByLabel("Password").press("Enter");
    await expect(page.getByRole("button", { name: "Sign out" }), `signed in at ${host}`).toBeVisible({
      timeout: 60_000,
    });
    // A change from the console, which must come from Settle's own origin, is accepted at this address too.
    const saved = await page.evaluate(
      async () =>
        (
          await fetch("/api/v1/saved-views", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: `v${Math.random()}`, query: "status=outcome_unknown" }),
          })
        ).status,
    );
    expect(saved, `a console change at ${host}`).toBe(200);
    for (const url of urls) expect(url, `a URL asked for at ${host}`).not.toContain(encodeURIComponent(password));
    await context.close();
  }
});

test("without its scripts the form cannot submit, sends no field, and says which address to open", async ({
  browser,
}) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  const urls = recordUrls(page);
  await page.goto(`http://127.0.0.1:${port}/sign-in`, { timeout: 120_000 });
  const form = page.locator("form");
  await expect(form).toHaveAttribute("method", "post");
  await expect(form.locator("input[name]")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Sign in" })).toBeDisabled();
  await page.getByLabel("Email").fill("admin@settle.local");
  await page.getByLabel("Password").fill(password);
  await page.getByLabel("Password").press("Enter");
  // It fades in after a delay (a page whose scripts load removes it first).
  await expect
    .poll(() => page.getByTestId("scripts-missing").evaluate((e) => getComputedStyle(e).opacity), { timeout: 10_000 })
    .toBe("1");
  await expect(page.getByTestId("scripts-missing")).toContainText(`http://localhost:${port}/sign-in`);
  await expect(page.getByRole("status")).toContainText(`This page was opened at 127.0.0.1:${port}`);
  for (const url of urls) expect(url).not.toContain(encodeURIComponent(password));
  expect(page.url()).toBe(`http://127.0.0.1:${port}/sign-in`);
  await context.close();
});

// `next dev` has no server script to say `Connection: close` after an early answer: node reads and drops the
// rest of the body and keeps the connection (docs/decisions/025-server-limits.md), which a pooling client
// can reuse. The first-run key (the `local` runtime) in the banner.
test("an early answer never costs the next request on a keep-alive pool under next dev", async () => {
  test.setTimeout(180_000);
  const key = /stl_rk_[a-z0-9]{8}_[A-Za-z0-9]{32}/.exec(output)?.[0];
  expect(key, "next dev printed the first-run key").toBeTruthy();
  const base = `http://127.0.0.1:${port}`;
  await earlyThenOrdinary(viaFetch(base), { key: key!, rounds: 50, side: "dev-fetch", closes: false });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await earlyThenOrdinary(viaAgent(agent, base), { key: key!, rounds: 50, side: "dev-agent", closes: false });
  } finally {
    agent.destroy();
  }
});
