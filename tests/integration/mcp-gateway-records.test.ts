import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { createRuntimeKey, revokeRuntimeKey } from "@/lib/identity/runtime-keys";
import {
  connectStdio,
  invocationOf,
  scratch,
  shopConfig,
  startSettle,
  textOf,
  waitUntil,
  type Scratch,
  type SettleUnderTest,
  type StdioSession,
} from "./mcp-gateway-support";

// The real `settle-mcp` bin over stdio, against Settle on PostgreSQL: what
// the gateway reports reaches Settle or is set aside (never re-sent forever),
// Settle's refusals refuse the call, the key stays out of the server's reach
// when it comes from a file, and a tool name no tool can have is refused
// before any pattern reads it.

const order = (customer: string, note?: string) => ({
  name: "create_order",
  arguments: { customer, items: [{ sku: "SKU-1", qty: 1 }], ...(note ? { note } : {}) },
});
const settleOf = (result: any) =>
  result.structuredContent as { code: string; commit_state: string; next_action: string };

describe("MCP gateway records and refusals (stdio, PostgreSQL)", () => {
  let settle: SettleUnderTest;
  const sessions: StdioSession[] = [];
  const open = async (
    s: Scratch,
    ...rest: Parameters<typeof connectStdio> extends [unknown, unknown, ...infer R] ? R : never
  ) => {
    const session = await connectStdio(settle, s, ...rest);
    sessions.push(session);
    return session;
  };

  beforeAll(async () => {
    settle = await startSettle("postgres");
  });
  afterAll(async () => {
    await Promise.all(sessions.map((x) => x.close().catch(() => {})));
    await settle?.close();
  });

  it("reads the key from SETTLE_KEY_FILE: the server sees it in neither its environment nor the gateway's environ or command line", async () => {
    const s = scratch();
    const keyFile = path.join(s.dir, "settle.key");
    writeFileSync(keyFile, `${settle.key}\n`, { mode: 0o600 });
    const dump = path.join(s.dir, "server-view.json");
    const preload = path.join(s.dir, "dump-view.mjs");
    // What an untrusted server running as the same user can read of its parent (the gateway).
    writeFileSync(
      preload,
      `import { readFileSync, writeFileSync } from "node:fs";
const parent = (f) => { try { return readFileSync("/proc/" + process.ppid + "/" + f, "utf8"); } catch (e) { return "unreadable: " + e.message; } };
writeFileSync(${JSON.stringify(dump)}, JSON.stringify({ env: process.env, environ: parent("environ"), cmdline: parent("cmdline") }));
`,
    );
    const session = await open(s, shopConfig, {}, { keyFile, serverPreload: [preload] });
    const created = (await session.client.callTool(order("key-file"))) as any;
    expect(created.isError).toBeFalsy();
    const log = await session.logFor((l) => l.tool === "create_order");
    await waitUntil(
      "recorded with the key from the file",
      async () => (await invocationOf(settle, log.invocation!)).status === "succeeded",
    );
    const view = JSON.parse(readFileSync(dump, "utf8")) as {
      env: Record<string, string>;
      environ: string;
      cmdline: string;
    };
    expect(Object.keys(view.env).filter((k) => k.startsWith("SETTLE_KEY"))).toEqual([]);
    expect(view.environ).not.toMatch(/^unreadable/);
    expect(view.environ).not.toContain(settle.key);
    expect(view.cmdline).not.toContain(settle.key);
  });

  it("with its key revoked, a send (fail-open when Settle is down) is refused, loudly, and never sent", async () => {
    const s = scratch();
    const { key, prefix } = await createRuntimeKey(settle.ctx.db, settle.ctx.runtime, "revoked-later");
    const session = await open(s, shopConfig, {}, { key });
    await revokeRuntimeKey(settle.ctx.db, prefix, "test");
    const sent = (await session.client.callTool({
      name: "send_email",
      arguments: { to: ["a@example.com"], subject: "revoked", body: "b" },
    })) as any;
    expect(settleOf(sent)).toMatchObject({
      code: "SETTLE_REFUSED",
      commit_state: "not_committed",
      next_action: "escalate",
    });
    expect(s.ledger().filter((l) => l.kind === "email")).toEqual([]);
    expect(session.stderr()).toMatch(/refused the gateway's key/);
    expect((await session.logFor((l) => l.tool === "send_email")).decision).toBe("refused:settle_401");
  });

  it("cuts a call's envelope to fit Settle's limit: a 1.5 MB argument is guarded and recorded, not failed open and spooled", async () => {
    const s = scratch();
    const session = await open(s);
    const created = (await session.client.callTool(order("large-note", "n".repeat(1_500_000)))) as any;
    expect(created.isError).toBeFalsy();
    const log = await session.logFor((l) => l.tool === "create_order");
    expect(log.decision).toBe("forwarded");
    await waitUntil("recorded", async () => (await invocationOf(settle, log.invocation!)).status === "succeeded");
    const intent = (await invocationOf(settle, log.invocation!)).attempts.find((a: any) => a.phase === "intent");
    expect(JSON.stringify(intent.envelope)).toContain("settle.dev/truncated");
    expect(statSync(path.join(s.dir, "spool")).mode & 0o777).toBe(0o700);
  });

  it("sets a spooled record Settle refuses (413) aside in the dead-letter file, once, and sends every record behind it", async () => {
    const s = scratch();
    const spool = path.join(s.dir, "spool");
    mkdirSync(spool, { mode: 0o700 });
    const at = new Date().toISOString();
    // As a gateway before envelopes were cut could leave it: one record over Settle's limit, then 200 more.
    const big = {
      event_id: "old-big:a1:outcome",
      task_id: "old",
      invocation_id: "old-big",
      attempt: 1,
      tool: "create_order",
      phase: "outcome",
      at,
      envelope: { content: [{ type: "text", text: "x".repeat(1_200_000) }] },
    };
    const rest = Array.from({ length: 200 }, (_, i) => ({
      event_id: `old-${i}:a1:intent`,
      task_id: "old",
      invocation_id: `old-${i}`,
      attempt: 1,
      tool: "create_order",
      phase: "intent",
      at,
      idempotency_key: `k-${i}`,
    }));
    writeFileSync(
      path.join(spool, "spool-999999-1.jsonl"),
      [big, ...rest].map((r) => JSON.stringify(r)).join("\n") + "\n",
      { mode: 0o600 },
    );
    const session = await open(s);
    await waitUntil(
      "the last record behind the refused one is in Settle",
      async () => (await invocationOf(settle, "old-199")).invocation_id === "old-199",
      20_000,
    );
    await waitUntil("the refused one is in the dead-letter file", () =>
      existsSync(path.join(spool, "dead-letter.jsonl")),
    );
    const dead = readFileSync(path.join(spool, "dead-letter.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(dead.map((d) => d.record.event_id)).toEqual(["old-big:a1:outcome"]);
    expect(dead[0].reason).toMatch(/413|PAYLOAD_TOO_LARGE/);
    // Two more drain rounds: it is not sent, nor logged, again.
    await new Promise((r) => setTimeout(r, 4500));
    expect(session.stderr().split("old-big:a1:outcome").length - 1).toBe(1);
  });

  it("refuses a 350-character tool name before matching it, and the next call is not held up", async () => {
    await addToolCatalogEntry(
      settle.ctx.db,
      { runtime: settle.ctx.runtime, pattern: "*.*.*.*.create", effect_class: "money" },
      "admin@example.com",
    );
    const s = scratch();
    const session = await open(s, { ...shopConfig, settle_catalog: true });
    const long = (await session.client.callTool({ name: `${".".repeat(349)}x`, arguments: {} })) as any;
    expect(settleOf(long)).toMatchObject({ code: "INVALID_REQUEST", next_action: "correct_input" });
    expect(textOf(long)).toMatch(/at most 200 characters/);
    const created = (await session.client.callTool(order("after-long-name"))) as any;
    expect(created.isError).toBeFalsy();
  });
});
