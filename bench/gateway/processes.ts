import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "../setup";

// The processes of the gateway bench: the SDK shop over Streamable HTTP
// under a supervisor that starts it again on the same port whenever it
// crashes (the chaos makes it), and the real `settle-mcp --listen` bin.

const shopServer = path.join(ROOT, "packages/settle-mcp-gateway/test/shop/shop-server.ts");
const bin = path.join(ROOT, "packages/settle-mcp-gateway/bin/settle-mcp.mjs");

export type Shop = { url: string; crashes: () => number; close: () => Promise<void> };

function launchShop(port: number, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", shopServer, "--http", String(port)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once("exit", (code) => reject(new Error(`the shop exited (${code}) before listening`)));
  });
}

export async function superviseShop(port: number, env: Record<string, string>): Promise<Shop> {
  let current = await launchShop(port, env);
  let crashes = 0;
  let closing = false;
  const watch = (child: ChildProcess) =>
    child.once("exit", () => {
      if (closing) return;
      crashes += 1;
      void launchShop(current.port, env).then((next) => {
        current = next;
        watch(next.child);
      });
    });
  watch(current.child);
  return {
    url: `http://127.0.0.1:${current.port}/mcp`,
    crashes: () => crashes,
    close: async () => {
      closing = true;
      const exited = new Promise((r) => current.child.once("exit", r));
      current.child.kill("SIGKILL");
      await exited;
    },
  };
}

export type GatewayProcess = { url: string; stderr: () => string; stop: () => Promise<void> };

export async function startGateway(options: {
  port: number;
  upstream: string;
  settleUrl: string;
  key: string;
  config: object;
  dir: string;
}): Promise<GatewayProcess> {
  const configFile = path.join(options.dir, "gateway.json");
  writeFileSync(configFile, JSON.stringify(options.config));
  const child = spawn(
    process.execPath,
    [bin, "--config", configFile, "--listen", String(options.port), "--upstream", options.upstream],
    {
      cwd: ROOT,
      env: { ...process.env, SETTLE_URL: options.settleUrl, SETTLE_KEY: options.key },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += String(d)));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + 30_000;
  while (!stderr.includes("listening on")) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`settle-mcp did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${options.port}/`,
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
