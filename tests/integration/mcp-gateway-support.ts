import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createRegistry } from "@/packages/settle-mcp-gateway/src/registry";
import { createToolCatalog } from "@/packages/settle-mcp-gateway/src/catalog";
import { parseConfig } from "@/packages/settle-mcp-gateway/src/config";
import { startHttpGateway, type HttpGateway } from "@/packages/settle-mcp-gateway/src/http-gateway";
import { createSettleLink, type SettleLink } from "@/packages/settle-mcp-gateway/src/settle-link";
import { openSpool } from "@/packages/settle-mcp-gateway/src/spool";
import type { CallLog } from "@/packages/settle-mcp-gateway/src/tool-call";
import { readLedger, type Fault, type LedgerLine } from "@/packages/settle-mcp-gateway/test/shop/shop-tools";
import { createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { startServer, type TestServer } from "./http-server";

// What the MCP gateway's end-to-end tests share: Settle (its route handlers
// over HTTP, on PostgreSQL or PGlite), the SDK shop as a real MCP server
// process, the gateway (the real `settle-mcp` bin over stdio, or the HTTP
// gateway in this process), and SDK clients in front of it.

const root = path.resolve(__dirname, "../..");
const shopServer = path.join(root, "packages/settle-mcp-gateway/test/shop/shop-server.ts");
const bin = path.join(root, "packages/settle-mcp-gateway/bin/settle-mcp.mjs");

export const shopConfig = {
  tools: [
    {
      match: "create_order",
      effect: "create",
      replay: true,
      probe: { tool: "get_order", arguments: { idempotency_key: "{{idempotency_key}}" } },
    },
    { match: "charge_card", effect: "money" },
    { match: "send_email", effect: "send" },
    { match: "refund_*", effect: "money", approval: true },
  ],
  call_timeout_s: 5,
  in_flight_wait_s: 2,
  approval_wait_s: 2,
  settle_timeout_ms: 1500,
};

export type SettleUnderTest = {
  ctx: TestContext;
  server: TestServer;
  url: string;
  key: string;
  operatorToken: string;
  close: () => Promise<void>;
};

export async function startSettle(backend: Backend): Promise<SettleUnderTest> {
  const ctx = await openSettle(backend);
  const server = await startServer();
  const { token } = await createOperator(ctx.db, "operator");
  return {
    ctx,
    server,
    url: server.url,
    key: ctx.key,
    operatorToken: token,
    close: async () => {
      await server.close();
      await ctx.teardown();
    },
  };
}

export type Scratch = {
  dir: string;
  ledger: () => LedgerLine[];
  fault: (f: Fault) => void;
  /** Faults the shop has not taken yet: a fault is taken when its call reaches the shop, so this says a call is running there. */
  faultsLeft: () => Fault[];
  env: Record<string, string>;
};

export function scratch(): Scratch {
  const dir = mkdtempSync(path.join(tmpdir(), "settle-mcp-"));
  const ledger = path.join(dir, "ledger.jsonl");
  const faults = path.join(dir, "faults.jsonl");
  writeFileSync(faults, "");
  return {
    dir,
    ledger: () => readLedger(ledger),
    fault: (f) => appendFileSync(faults, JSON.stringify(f) + "\n"),
    faultsLeft: () =>
      readFileSync(faults, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Fault),
    env: { SHOP_LEDGER: ledger, SHOP_FAULTS: faults },
  };
}

const baseEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));

export type StdioSession = {
  client: Client;
  stderr: () => string;
  logs: () => CallLog[];
  /** The gateway's log line for a call arrives on stderr, apart from its answer on stdout: waits for it. */
  logFor: (match: (l: CallLog) => boolean, after?: number) => Promise<CallLog>;
  close: () => Promise<void>;
  transport: StdioClientTransport;
};

/** An SDK client that launches the real `settle-mcp` bin in front of the shop, as Claude Desktop would. */
/** How the gateway is launched: the key in SETTLE_KEY (default) or in a file (SETTLE_KEY_FILE); modules the server preloads. */
export type Launch = { key?: string; keyFile?: string; serverPreload?: string[]; env?: Record<string, string> };

export async function connectStdio(
  settle: SettleUnderTest,
  s: Scratch,
  config: object = shopConfig,
  clientOptions: ConstructorParameters<typeof Client>[1] = {},
  launch: Launch = {},
): Promise<StdioSession> {
  const configFile = path.join(s.dir, `gateway-${Date.now()}.json`);
  writeFileSync(configFile, JSON.stringify({ ...config, spool_dir: path.join(s.dir, "spool") }));
  const keyEnv: Record<string, string> = launch.keyFile
    ? { SETTLE_KEY_FILE: launch.keyFile }
    : { SETTLE_KEY: launch.key ?? settle.key };
  const preload = (launch.serverPreload ?? []).flatMap((m) => ["--import", m]);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "--config", configFile, "--", process.execPath, "--import", "tsx", ...preload, shopServer, "--stdio"],
    env: { ...baseEnv(), ...s.env, ...launch.env, SETTLE_URL: settle.url, ...keyEnv },
    stderr: "pipe",
    cwd: root,
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += String(d)));
  const client = new Client({ name: "gateway-test", version: "1.0.0" }, clientOptions);
  await client.connect(transport);
  const logs = () =>
    stderr
      .split("\n")
      .filter((l) => l.startsWith('{"settle_mcp":"call"'))
      .map((l) => JSON.parse(l) as CallLog);
  return {
    client,
    transport,
    stderr: () => stderr,
    logs,
    logFor: async (match, after = 0) => {
      const found = () => logs().slice(after).filter(match);
      await waitUntil("the gateway's log line", () => found().length > 0, 5000);
      return found().at(-1)!;
    },
    close: () => client.close(),
  };
}

export type ShopProcess = { url: string; child: ChildProcess; stop: () => Promise<void>; restart: () => Promise<void> };

/** The shop over Streamable HTTP, as a process of its own (a crash is a real exit), restarted on the same port. */
export async function startShopHttp(
  s: Scratch,
  port = 0,
  mode: "--http" | "--http-sessions" = "--http",
): Promise<ShopProcess> {
  const launch = (p: number) =>
    new Promise<{ child: ChildProcess; port: number }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", shopServer, mode, String(p)], {
        cwd: root,
        env: { ...process.env, ...s.env },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout!.on("data", (d) => {
        out += String(d);
        const m = /listening (\d+)/.exec(out);
        if (m) resolve({ child, port: Number(m[1]) });
      });
      child.once("exit", (code) => reject(new Error(`shop exited (${code}) before listening`)));
    });
  let current = await launch(port);
  const shop: ShopProcess = {
    url: `http://127.0.0.1:${current.port}/mcp`,
    child: current.child,
    stop: async () => {
      if (current.child.exitCode === null) {
        const exited = new Promise((r) => current.child.once("exit", r));
        current.child.kill("SIGKILL");
        await exited;
      }
    },
    restart: async () => {
      await shop.stop();
      current = await launch(current.port);
      shop.child = current.child;
    },
  };
  return shop;
}

export type HttpSession = {
  gateway: HttpGateway;
  settleLink: SettleLink;
  logs: CallLog[];
  client: (options?: ConstructorParameters<typeof Client>[1]) => Promise<Client>;
  close: () => Promise<void>;
};

/** The HTTP gateway in this process in front of `upstream`, and SDK clients of either protocol era. */
export async function startHttpSession(
  settle: SettleUnderTest,
  s: Scratch,
  upstream: string,
  config: object = shopConfig,
  access?: { hosts?: string[]; origins?: string[]; token?: string | null },
): Promise<HttpSession> {
  const parsed = parseConfig({ ...config, spool_dir: path.join(s.dir, "spool") }, "test");
  const logs: CallLog[] = [];
  const settleLink = createSettleLink({
    url: settle.url,
    key: settle.key,
    spool: openSpool(parsed.spool_dir!),
    fastTimeoutMs: parsed.settle_timeout_ms,
  });
  const gateway = await startHttpGateway({
    port: 0,
    host: "127.0.0.1",
    upstream,
    ...(access ? { access } : {}),
    catalog: createToolCatalog(),
    deps: {
      config: parsed,
      settle: settleLink,
      registry: createRegistry(),
      log: (l) => logs.push(l),
      consoleLink: (id) => `${settle.url}/invocations/${id}`,
      now: () => new Date(),
    },
  });
  const clients: Client[] = [];
  return {
    gateway,
    settleLink,
    logs,
    client: async (options) => {
      const client = new Client({ name: "gateway-http-test", version: "1.0.0" }, options);
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
      clients.push(client);
      return client;
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await gateway.close();
      await settleLink.flush();
      settleLink.close();
    },
  };
}

/** A free port on loopback, to give a proxy that must be named in the gateway's allowed hosts before it starts. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** Settle's view, through the runtime's key. */
export async function settleGet(settle: SettleUnderTest, pathname: string): Promise<any> {
  const res = await fetch(`${settle.url}${pathname}`, { headers: { authorization: `Bearer ${settle.key}` } });
  return res.json();
}

export async function invocationOf(settle: SettleUnderTest, id: string): Promise<any> {
  return settleGet(settle, `/api/v1/invocations/${encodeURIComponent(id)}`);
}

/** The queue: what needs a person. */
export async function queueOf(settle: SettleUnderTest): Promise<any[]> {
  const body = await settleGet(
    settle,
    "/api/v1/invocations?status=outcome_unknown,stalled,partially_applied,awaiting_approval,verifying,escalated&limit=200",
  );
  return body.items;
}

export async function operatorAct(settle: SettleUnderTest, id: string, action: Record<string, unknown>): Promise<any> {
  const current = await invocationOf(settle, id);
  const res = await fetch(`${settle.url}/api/v1/invocations/${encodeURIComponent(id)}/actions`, {
    method: "POST",
    headers: { authorization: `Bearer ${settle.operatorToken}`, "content-type": "application/json" },
    body: JSON.stringify({ version: current.version, ...action }),
  });
  return { status: res.status, body: await res.json() };
}

/** The text of a CallToolResult's first content part. */
export const textOf = (result: any): string => (result?.content?.[0]?.text as string) ?? "";

export async function waitUntil(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting until ${what}`);
}
