#!/usr/bin/env node
// `npm test`, after the build: `npm start` on a fresh embedded database, as a
// newcomer runs it, and the CLI beside it — `keys create`, `users create`,
// `catalog set` and `users reset-password --link` (on the server's address, not
// the shell's) succeed while the server holds the database, and the key they
// made works against the server at once. Also the server's operations
// surface: readiness, and Prometheus at /metrics (a browser there gets the page).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const dir = mkdtempSync(path.join(tmpdir(), "settle-start-"));
const token = "smoke-metrics-token-0123456789";
const port = await new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const env = {
  ...process.env,
  SETTLE_DATA_DIR: path.join(dir, "data"),
  SETTLE_METRICS_TOKEN: token,
  PORT: String(port),
};
delete env.DATABASE_URL;
const url = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, ["bin/settle-server.mjs", "-p", String(port), "-H", "127.0.0.1"], {
  env: { ...env, SETTLE_LOG_LEVEL: "warn" },
  stdio: ["ignore", "pipe", "pipe"],
});
let output = "";
server.stdout.on("data", (d) => (output += d));
server.stderr.on("data", (d) => (output += d));

const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
};
// A kept-alive connection the server closed while the CLI ran (its keep-alive timeout) fails the next request
// as it is reused: that one is sent again, on a new connection, as any HTTP client would.
const request = (path, init) =>
  fetch(`${url}${path}`, init).catch((error) =>
    error.cause?.code === "UND_ERR_SOCKET" ? fetch(`${url}${path}`, init) : Promise.reject(error),
  );
const settle = (...args) => spawnSync(process.execPath, ["bin/settle.mjs", ...args], { env, encoding: "utf8" });

try {
  const deadline = Date.now() + 90_000;
  let ready = null;
  while (Date.now() < deadline && server.exitCode === null) {
    ready = await fetch(`${url}/api/health/ready`).catch(() => null);
    if (ready?.status === 200) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  check(ready?.status === 200, `npm start is ready on the embedded database (${url})`);

  const key = settle("keys", "create", "smoke-agent");
  check(
    key.status === 0 && /^stl_rk_\w+$/.test(key.stdout.trim()),
    `keys create beside it: exit ${key.status} ${key.stderr.trim()}`,
  );
  const ingest = await fetch(`${url}/api/v1/envelopes`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.stdout.trim()}`, "content-type": "application/json" },
    body: JSON.stringify({
      task_id: "smoke",
      invocation_id: "smoke-1",
      tool: "charge_card",
      envelope: { outcome: "unknown" },
    }),
  });
  check(ingest.status === 207, `the new key works against the server at once (${ingest.status})`);
  const user = settle("users", "create", "--email", "smoke@example.com", "--role", "operator");
  check(
    user.status === 0 && user.stdout.trim().length >= 12,
    `users create beside it: exit ${user.status} ${user.stderr.trim()}`,
  );
  const entry = settle("catalog", "set", "smoke-agent", "charge_*", "money");
  check(entry.status === 0, `catalog set beside it: exit ${entry.status} ${entry.stderr.trim()}`);
  // A shell beside the server without its PORT: the link is still on the server's address, which it noted.
  const { PORT: _port, ...shell } = env;
  const reset = spawnSync(
    process.execPath,
    ["bin/settle.mjs", "users", "reset-password", "--email", "smoke@example.com", "--link"],
    { env: shell, encoding: "utf8" },
  );
  check(
    reset.status === 0 && reset.stdout.startsWith(`http://localhost:${port}/reset-password?token=`),
    `users reset-password --link beside it is on the server's address: ${reset.stdout.trim().slice(0, 60)}… ${reset.stderr.trim()}`,
  );

  const scrape = await request("/metrics", { headers: { authorization: `Bearer ${token}` } });
  const text = await scrape.text();
  check(
    scrape.status === 200 && text.includes('settle_ingest_records_total{result="accepted"} 1'),
    `Prometheus at /metrics (${scrape.status}, ${scrape.headers.get("content-type")})`,
  );
  const page = await request("/metrics", { headers: { accept: "text/html" }, redirect: "manual" });
  check(
    !(page.headers.get("content-type") ?? "").startsWith("text/plain"),
    `a browser at /metrics gets the console (${page.status})`,
  );
} catch (error) {
  check(false, `the smoke run itself: ${error.message}${error.cause ? ` (${error.cause.message})` : ""}`);
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => (server.exitCode === null ? server.once("exit", r) : r()));
  rmSync(dir, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.log(output.slice(-4000));
  process.exit(1);
}
