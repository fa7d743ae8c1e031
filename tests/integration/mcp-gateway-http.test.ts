import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Backend } from "./harness";
import {
  freePort,
  invocationOf,
  operatorAct,
  queueOf,
  scratch,
  shopConfig,
  startHttpSession,
  startSettle,
  startShopHttp,
  textOf,
  waitUntil,
  type HttpSession,
  type Scratch,
  type SettleUnderTest,
  type ShopProcess,
} from "./mcp-gateway-support";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy";

// The gateway over Streamable HTTP (`settle-mcp --listen … --upstream …`) in
// front of the SDK shop served by the SDK's createMcpHandler in a process of
// its own, with SDK clients of both protocol eras: 2025 (initialize) and
// 2026-07-28 (per-request envelope). Seed 002's six failures, a response
// stream that breaks after the effect, and a client whose own connection
// breaks mid-call and re-issues.

const order = (customer: string) => ({
  name: "create_order",
  arguments: { customer, items: [{ sku: "SKU-9", qty: 2 }] },
});
const charge = (orderId: string) => ({
  name: "charge_card",
  arguments: { order_id: orderId, amount_cents: 500, card_token: "tok_mastercard" },
});
const downOrder = (customer: string) => ({
  name: "create_order",
  arguments: { customer, items: [{ sku: "SKU-3", qty: 1 }] },
});
const downCharge = { name: "charge_card", arguments: { order_id: "ord-down", amount_cents: 100, card_token: "tok_1" } };
const settleOf = (result: any) =>
  result.structuredContent as {
    code: string;
    commit_state: string;
    next_action: string;
    invocation_id: string;
    not_before: string | null;
  };

describe.each<Backend>(["postgres", "pglite"])("MCP gateway over Streamable HTTP, Settle on %s", (backend) => {
  let settle: SettleUnderTest;
  let s: Scratch;
  let shop: ShopProcess;
  let http: HttpSession;
  let client: Client;
  let proxyPort: number;
  const effects = (kind: string, match: (d: Record<string, unknown>) => boolean) =>
    s.ledger().filter((l) => l.kind === kind && match(l.detail));
  const queued = async (id: string) => (await queueOf(settle)).find((i) => i.invocation_id === id) ?? null;
  const lastLog = () => http.logs.at(-1)!;

  beforeAll(async () => {
    settle = await startSettle(backend);
    s = scratch();
    shop = await startShopHttp(s);
    proxyPort = await freePort();
    // The flaky client below reaches the gateway through a proxy: its Host names the proxy, which the gateway is told to answer to.
    http = await startHttpSession(settle, s, shop.url, undefined, { hosts: [`127.0.0.1:${proxyPort}`] });
    client = await http.client();
  });
  afterAll(async () => {
    await http?.close();
    await shop?.stop();
    await settle?.close();
  });

  it("passes tools/list through unchanged and forwards a call, recording it", async () => {
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(["create_order", "charge_card", "send_email", "get_order"]);
    const created = (await client.callTool(order("plain"))) as any;
    expect(created.structuredContent.status).toBe("created");
    await waitUntil("recorded", async () => (await invocationOf(settle, lastLog().invocation!)).status === "succeeded");
    // get_order has no rule: its readOnlyHint, read from the tools/list that passed through, makes it a read (never guarded).
    const found = (await client.callTool({
      name: "get_order",
      arguments: { order_id: created.structuredContent.order_id },
    })) as any;
    expect(found.structuredContent.found).toBe(true);
    expect(lastLog()).toMatchObject({ tool: "get_order", effect: "read", decision: "read" });
  });

  it("kill mid-call: the server dies after the effect; unknown, then the re-issue is probed against the restarted server and found", async () => {
    s.fault({ tool: "create_order", fault: "crash_after_effect" });
    const first = (await client.callTool(order("kill-h"))) as any;
    expect(settleOf(first)).toMatchObject({ code: "OUTCOME_UNKNOWN", commit_state: "unknown" });
    const id = settleOf(first).invocation_id;
    await waitUntil("queued as unknown", async () => (await queued(id))?.status === "outcome_unknown");
    await shop.restart();
    const again = (await client.callTool(order("kill-h"))) as any;
    expect(settleOf(again)).toMatchObject({ code: "ALREADY_COMMITTED", commit_state: "committed", invocation_id: id });
    expect(effects("order", (d) => d.customer === "kill-h")).toHaveLength(1);
    expect(await queued(id)).toBeNull();
  });

  it("a response stream that breaks after the effect: unknown, never failure; the re-issue finds the order instead of making another", async () => {
    s.fault({ tool: "create_order", fault: "break_stream_after_effect" });
    const first = (await client.callTool(order("stream-h"))) as any;
    expect(settleOf(first)).toMatchObject({ code: "OUTCOME_UNKNOWN", commit_state: "unknown" });
    expect(lastLog().upstream).toBe("lost:stream_broken");
    const again = (await client.callTool(order("stream-h"))) as any;
    expect(settleOf(again)).toMatchObject({ code: "ALREADY_COMMITTED", invocation_id: settleOf(first).invocation_id });
    expect(effects("order", (d) => d.customer === "stream-h")).toHaveLength(1);
  });

  it("duplicate delivery: identical calls at once share one order", async () => {
    const answers = (await Promise.all([client.callTool(order("dup-h")), client.callTool(order("dup-h"))])) as any[];
    expect(new Set(answers.map((a) => a.structuredContent.order_id)).size).toBe(1);
    expect(effects("order", (d) => d.customer === "dup-h")).toHaveLength(1);
  });

  it("200 with an error body: recorded as failed, not charged; slow success: joined, not raced", async () => {
    s.fault({ tool: "charge_card", fault: "declined" });
    expect(textOf(await client.callTool(charge("ord-h")))).toBe("card declined");
    const declinedId = lastLog().invocation!;
    await waitUntil("failed", async () => (await invocationOf(settle, declinedId)).status === "failed");
    expect(effects("charge", (d) => d.order_id === "ord-h")).toHaveLength(0);

    s.fault({ tool: "create_order", fault: "slow", ms: 1000 });
    const first = client.callTool(order("slow-h"));
    await new Promise((r) => setTimeout(r, 250));
    const [a, b] = (await Promise.all([first, client.callTool(order("slow-h"))])) as any[];
    expect(a.structuredContent.order_id).toBe(b.structuredContent.order_id);
    expect(effects("order", (d) => d.customer === "slow-h")).toHaveLength(1);
  });

  it("partial batch in the queue; Retry-After honoured without calling the server", async () => {
    s.fault({ tool: "send_email", fault: "relay_partial" });
    await client.callTool({
      name: "send_email",
      arguments: { to: ["cy@example.com", "di@example.com"], subject: "Hi", body: "." },
    });
    const partial = lastLog().invocation!;
    await waitUntil("partial queued", async () => (await queued(partial))?.status === "partially_applied");

    s.fault({ tool: "create_order", fault: "rate_limited", retry_after_s: 1 });
    await client.callTool(order("rl-h"));
    const early = (await client.callTool(order("rl-h"))) as any;
    expect(settleOf(early)).toMatchObject({ code: "RETRY_LATER", commit_state: "not_committed" });
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(settleOf(early).not_before!) - Date.now()) + 100));
    expect(((await client.callTool(order("rl-h"))) as any).structuredContent.status).toBe("created");
    expect(effects("order", (d) => d.customer === "rl-h")).toHaveLength(1);
  });

  it("the client's own connection breaks mid-call and it re-issues: the first call is finished and recorded, the re-issue gets its result", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: http.gateway.port }, proxyPort);
    const flaky = new Client({ name: "flaky", version: "1.0.0" });
    await flaky.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${proxy.port}/`)));
    s.fault({ tool: "create_order", fault: "slow", ms: 800 });
    const lost = flaky.callTool(order("cut-h")).catch((e: Error) => e);
    // Broken while the shop runs the call (a fixed pause lost the race on a loaded machine: the call never left).
    await waitUntil("the call reached the shop", () => !s.faultsLeft().some((f) => f.tool === "create_order"));
    await proxy.stop();
    expect(await lost).toBeInstanceOf(Error);
    await waitUntil("the first call is recorded as succeeded", async () => {
      const log = http.logs.find(
        (l) => l.tool === "create_order" && l.decision === "forwarded" && l.upstream === "result" && l.ms >= 700,
      );
      return log !== undefined && (await invocationOf(settle, log.invocation!)).status === "succeeded";
    });
    const again = (await client.callTool(order("cut-h"))) as any;
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent.order_id).toBe(effects("order", (d) => d.customer === "cut-h")[0]!.id);
    expect(effects("order", (d) => d.customer === "cut-h")).toHaveLength(1);
    await flaky.close().catch(() => {});
  });

  it("a 2026-07-28 client: the per-request envelope passes through; a repeated call is replayed, not repeated", async () => {
    const modern = new Client(
      { name: "modern", version: "1.0.0" },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await modern.connect(new StreamableHTTPClientTransport(new URL(http.gateway.url)));
    const first = (await modern.callTool(order("modern-h"))) as any;
    const second = (await modern.callTool(order("modern-h"))) as any;
    expect(second.structuredContent.order_id).toBe(first.structuredContent.order_id);
    expect(second._meta["settle.dev/replayed"]).toBeDefined();
    expect(effects("order", (d) => d.customer === "modern-h")).toHaveLength(1);

    // The server asks first (input_required); the client answers through its elicitation handler in a new request.
    modern.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { confirm: true } }));
    const confirmed = (await modern.callTool({
      name: "create_order",
      arguments: { customer: "modern-confirm", items: [{ sku: "SKU-9", qty: 1 }], note: "confirm" },
    })) as any;
    expect(confirmed.structuredContent.status).toBe("created");
    expect(effects("order", (d) => d.customer === "modern-confirm")).toHaveLength(1);
    const id = http.logs.at(-1)!.invocation!;
    await waitUntil(
      "the answered call is recorded",
      async () => (await invocationOf(settle, id)).status === "succeeded",
    );
    const attempts = (await invocationOf(settle, id)).attempts.filter((a: any) => a.phase === "outcome");
    expect(attempts.map((a: any) => [a.attempt, a.commit_state])).toEqual([
      [1, "not_committed"],
      [2, "committed"],
    ]);
    await modern.close();
  });

  it("an approval over HTTP, with a 2025 client that supports elicitation, on a sessionful server: the user keeps waiting and the call proceeds once approved", async () => {
    const s2 = scratch();
    const sessionful = await startShopHttp(s2, 0, "--http-sessions");
    const held = await startHttpSession(settle, s2, sessionful.url, {
      ...shopConfig,
      effects: { money: { approval: true } },
      approval_wait_s: 1,
    });
    try {
      const asker = await held.client({ capabilities: { elicitation: {} } });
      let asked = 0;
      asker.setRequestHandler("elicitation/create", async () => {
        asked += 1;
        return { action: "accept", content: { keep_waiting: true } };
      });
      const call = asker.callTool(charge("ord-http-appr"), { timeout: 20_000 });
      let id = "";
      await waitUntil("awaiting approval", async () => {
        id =
          (await queueOf(settle)).find((i) => i.tool === "charge_card" && i.status === "awaiting_approval")
            ?.invocation_id ?? "";
        return id !== "";
      });
      await waitUntil("the user was asked", () => asked > 0, 5000);
      await operatorAct(settle, id, { action: "approve", note: "ok" });
      expect(textOf(await call)).toContain("charged 500");
      expect(s2.ledger().filter((l) => l.kind === "charge")).toHaveLength(1);
    } finally {
      await held.close();
      await sessionful.stop();
    }
  });

  // When Settle cannot be reached the effect class decides: money (and
  // destructive, and what nothing classifies) fail closed, reads and plain
  // writes fail open. Either way every call is spooled to disk and sent when
  // Settle answers again, so nothing is lost; meanwhile the gateway's own
  // memory refuses to send again what it knows landed. And --dry-run records
  // everything and blocks nothing.
  describe("while Settle is unreachable, and in a dry run", () => {
    let proxy: TcpProxy;
    let s: Scratch;
    let shop: ShopProcess;
    let http: HttpSession;

    beforeAll(async () => {
      proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(settle.url).port) });
      s = scratch();
      shop = await startShopHttp(s);
      http = await startHttpSession({ ...settle, url: `http://127.0.0.1:${proxy.port}` }, s, shop.url);
    });
    afterAll(async () => {
      await http?.close();
      await shop?.stop();
      await proxy?.close();
    });

    it("fails closed for money and open for a create, spools both, never sends a landed call twice, and loses nothing when Settle is back", async () => {
      const client = await http.client();
      await proxy.stop();

      const refused = (await client.callTool(downCharge)) as any;
      expect(refused.structuredContent).toMatchObject({ code: "SETTLE_UNREACHABLE", commit_state: "not_committed" });
      expect(s.ledger().filter((l) => l.kind === "charge")).toHaveLength(0);

      const created = (await client.callTool(downOrder("down-1"))) as any;
      expect(created.structuredContent.status).toBe("created");
      const again = (await client.callTool(downOrder("down-1"))) as any;
      expect(again.structuredContent.order_id).toBe(created.structuredContent.order_id);
      expect(s.ledger().filter((l) => l.detail.customer === "down-1")).toHaveLength(1);
      expect(http.logs.map((l) => l.decision)).toEqual(
        expect.arrayContaining(["fail_closed", expect.stringMatching(/^fail_open/), "replayed"]),
      );
      expect(readdirSync(path.join(s.dir, "spool")).length).toBeGreaterThan(0);

      await proxy.start();
      const openId = http.logs.find((l) => l.decision.startsWith("fail_open"))!.invocation!;
      const closedId = http.logs.find((l) => l.decision === "fail_closed")!.invocation!;
      await waitUntil(
        "the spool reaches Settle",
        async () => (await invocationOf(settle, openId)).status === "succeeded",
        15_000,
      );
      expect(await invocationOf(settle, closedId)).toMatchObject({
        tool: "charge_card",
        commit_state: "not_committed",
      });

      // Settle vouches again: the key it now knows committed is not sent a third time.
      const third = (await client.callTool(downOrder("down-1"))) as any;
      expect(third.structuredContent.order_id).toBe(created.structuredContent.order_id);
      expect(s.ledger().filter((l) => l.detail.customer === "down-1")).toHaveLength(1);
    });

    it("--dry-run records every call and blocks none", async () => {
      const dry = await startHttpSession(settle, s, shop.url, { ...shopConfig, dry_run: true });
      try {
        const client = await dry.client();
        await client.callTool(downOrder("dry-1"));
        await waitUntil(
          "recorded",
          async () => (await invocationOf(settle, dry.logs[0]!.invocation!)).status === "succeeded",
        );
        const second = (await client.callTool(downOrder("dry-1"))) as any;
        expect(textOf(second)).toContain("created");
        expect(s.ledger().filter((l) => l.detail.customer === "dry-1")).toHaveLength(2);
        expect(dry.logs.map((l) => l.decision)).toEqual(["forwarded", "dry_run:would_deny:already_committed"]);
        await waitUntil(
          "both recorded",
          async () => (await invocationOf(settle, dry.logs[1]!.invocation!)).status === "succeeded",
        );
        const [first, twin] = await Promise.all(dry.logs.map((l) => invocationOf(settle, l.invocation!)));
        expect(twin.idempotency_key).toBe(first.idempotency_key);
        expect(twin.invocation_id).not.toBe(first.invocation_id);
      } finally {
        await dry.close();
      }
    });
  });
});
