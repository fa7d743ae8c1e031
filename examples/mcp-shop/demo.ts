import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

// `npm run example:mcp`: an MCP client (as Claude Desktop or an agent would
// be) talks to the shop through settle-mcp. It shows, against a running
// Settle: a call forwarded and recorded; a stream that breaks after the shop
// did the work, recorded as unknown; the client's re-issue of that call
// stopped by the gateway, which asks get_order instead and finds the order;
// and where to see all of it in the console.

// The example's own process reads its settings; Settle's code never does.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const settleUrl = (env.SETTLE_URL ?? "http://localhost:3000").replace(/\/+$/, "");

function runtimeKey(): string {
  if (env.SETTLE_KEY) return env.SETTLE_KEY;
  // No key given: make one, beside the running server (the CLI works through it on the embedded database).
  const made = spawnSync(process.execPath, [path.join(root, "bin/settle.mjs"), "keys", "create", "mcp-shop"], {
    cwd: root,
    encoding: "utf8",
  });
  if (made.status !== 0) throw new Error(`could not create a runtime key: ${made.stderr.trim()}`);
  return made.stdout.trim();
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const settleOf = (result: unknown) =>
  ((result as { structuredContent?: Record<string, unknown> }).structuredContent ?? {}) as Record<string, string>;
const textOf = (result: unknown) =>
  ((result as { content?: { type: string; text?: string }[] }).content ?? []).map((c) => c.text ?? "").join(" ");

async function main(): Promise<number> {
  const health = await fetch(`${settleUrl}/api/health`).catch(() => null);
  if (!health?.ok) {
    process.stderr.write(`example:mcp: no Settle at ${settleUrl}: start it with \`npm run dev\` (or set SETTLE_URL)\n`);
    return 2;
  }
  const key = runtimeKey();
  const scratch = mkdtempSync(path.join(tmpdir(), "mcp-shop-"));
  const breakSwitch = path.join(scratch, "break");
  const run = Date.now().toString(36); // a customer per run, so the demo can run again
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      path.join(root, "packages/settle-mcp-gateway/bin/settle-mcp.mjs"),
      "--config",
      path.join(here, "settle-mcp.json"),
      "--",
      process.execPath,
      "--import",
      "tsx",
      path.join(here, "shop.ts"),
    ],
    env: {
      ...(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>),
      SETTLE_URL: settleUrl,
      SETTLE_KEY: key,
      SHOP_STATE: path.join(scratch, "shop.json"),
      SHOP_BREAK: breakSwitch,
      XDG_STATE_HOME: scratch,
    },
    stderr: "ignore",
    cwd: root,
  });
  const client = new Client({ name: "mcp-shop-demo", version: "1.0.0" });
  await client.connect(transport);
  const order = (customer: string) => ({
    name: "create_order",
    arguments: { customer, items: [{ sku: "mug", qty: 2 }] },
  });

  say(`1. create_order for ${run}-ada: forwarded to the shop, recorded in Settle`);
  const first = await client.callTool(order(`${run}-ada`));
  say(`   → ${textOf(first)}`);

  say(`2. create_order for ${run}-bob, and the stream breaks after the shop created the order`);
  writeFileSync(breakSwitch, "create_order");
  const broken = await client.callTool(order(`${run}-bob`));
  const unknown = settleOf(broken);
  say(`   → ${unknown.code}: commit state ${unknown.commit_state}, next action ${unknown.next_action}`);
  const id = unknown.invocation_id ?? "";

  say("3. the client re-issues the same call: the gateway does not send it again; it asks get_order");
  const again = await client.callTool(order(`${run}-bob`));
  const settled = settleOf(again);
  say(`   → ${settled.code ?? "answered"}: ${textOf(again)}`);

  const decision = await fetch(`${settleUrl}/api/v1/invocations/${encodeURIComponent(id)}/decision`, {
    headers: { authorization: `Bearer ${key}` },
  }).then((r) => r.json() as Promise<Record<string, string>>);
  await client.close();
  const shop = JSON.parse(readFileSync(path.join(scratch, "shop.json"), "utf8")) as { orders: { customer: string }[] };
  const bobs = shop.orders.filter((o) => o.customer === `${run}-bob`).length;
  say(`4. Settle: ${decision.status}, commit state ${decision.commit_state}, decision ${decision.decision}`);
  say(`   The shop has ${bobs} order for ${run}-bob. See it: ${settleUrl}/invocations/${encodeURIComponent(id)}`);
  const ok = unknown.commit_state === "unknown" && decision.commit_state === "committed" && bobs === 1;
  if (!ok) process.stderr.write("example:mcp: the demo did not end as expected (see above)\n");
  return ok ? 0 : 1;
}

process.exitCode = await main();
