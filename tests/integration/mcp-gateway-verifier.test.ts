import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { runVerifications } from "@/lib/verify/schedule";
import type { Backend } from "./harness";
import {
  connectStdio,
  invocationOf,
  scratch,
  settleGet,
  shopConfig,
  startSettle,
  waitUntil,
  type Scratch,
  type SettleUnderTest,
  type StdioSession,
} from "./mcp-gateway-support";

// The gateway as its runtime's verifier: a create_order whose server died after the effect is unknown; Settle
// asks (the catalog gives create_order a verifier), and the gateway answers with its rule's probe (get_order by
// key) right away — the client never re-issues the call, and the shop holds one order.

describe.each<Backend>(["postgres", "pglite"])(
  "the MCP gateway answers Settle's verifications, Settle on %s",
  (backend) => {
    let settle: SettleUnderTest;
    let s: Scratch;
    let session: StdioSession;

    beforeAll(async () => {
      settle = await startSettle(backend);
      s = scratch();
      await addToolCatalogEntry(
        settle.ctx.db,
        {
          runtime: settle.ctx.runtime,
          pattern: "create_order",
          effect_class: "create",
          verify: { after_s: 1, every_s: 60, max_tries: 3, absent_after_s: 1, lease_s: 30 },
        },
        "admin@example.com",
      );
      session = await connectStdio(settle, s);
    });
    afterAll(async () => {
      await session?.close();
      await settle?.close();
    });

    it("an unknown create_order is settled by the gateway's probe without a re-issue", async () => {
      s.fault({ tool: "create_order", fault: "crash_after_effect" });
      const first = (await session.client.callTool({
        name: "create_order",
        arguments: { customer: "verify-1", items: [{ sku: "SKU-1", qty: 1 }] },
      })) as any;
      const id = first.structuredContent.invocation_id as string;
      await waitUntil(
        "the unknown outcome is recorded",
        async () => (await invocationOf(settle, id)).status === "outcome_unknown",
      );
      await new Promise((r) => setTimeout(r, 1_100));
      await runVerifications(settle.ctx.db, new Date());
      await waitUntil(
        "the gateway's probe settled it",
        async () => (await invocationOf(settle, id)).status === "reconciled",
        // The gateway's poll, its probe and the answer's write, on the embedded database: 15 s ran out in CI beside
        // a busy machine (load 15 on 2 cores); the test's own 60 s bound is the limit.
        50_000,
      );
      expect(await invocationOf(settle, id)).toMatchObject({ commit_state: "committed", resolution: { by: "probe" } });
      const view = await settleGet(settle, `/api/v1/invocations/${encodeURIComponent(id)}/verification`);
      expect(view.answers[0]).toMatchObject({ found: true, via: "api", by: `runtime:${settle.ctx.runtime}` });
      expect(view.answers[0].evidence).toContain("get_order");
      expect(s.ledger().filter((l) => l.kind === "order" && l.detail.customer === "verify-1")).toHaveLength(1);
    });

    it("idempotency_arg: the shop sees the gateway's stable key, not the one the model minted; a re-issue with a new key is one order", async () => {
      const keyed = await connectStdio(settle, s, {
        ...shopConfig,
        tools: [{ match: "create_order", effect: "create", replay: true, idempotency_arg: "idempotency_key" }],
      });
      try {
        const call = (minted: string) =>
          keyed.client.callTool({
            name: "create_order",
            arguments: { customer: "keyed-1", items: [{ sku: "SKU-1", qty: 1 }], idempotency_key: minted },
          }) as Promise<any>;
        const first = await call("model-key-1");
        expect(first.isError ?? false).toBe(false);
        const again = await call("model-key-2");
        const orders = s.ledger().filter((l) => l.kind === "order" && l.detail.customer === "keyed-1");
        expect(orders).toHaveLength(1);
        const seen = orders[0]!.detail.idempotency_key as string;
        expect(seen).toMatch(/^mcp:create_order:/);
        expect(seen).toBe(orders[0]!.key);
        expect(again.structuredContent.order_id).toBe(first.structuredContent.order_id);
      } finally {
        await keyed.close();
      }
    });
  },
);
