import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "./harness";
import {
  connectStdio,
  invocationOf,
  operatorAct,
  queueOf,
  scratch,
  shopConfig,
  startSettle,
  textOf,
  waitUntil,
  type Scratch,
  type SettleUnderTest,
  type StdioSession,
} from "./mcp-gateway-support";

// Approve with edits and a reply to the agent through the gateway (issue 40 §2, docs/mcp-gateway.md): the real
// `settle-mcp` bin over stdio in front of the SDK shop. A person approves a held create_order with another quantity:
// the shop receives the edited arguments, once, with the gateway's own idempotency_arg, and Settle flags nothing.
// A rejection's reply is the text of the tool's result.

const config = {
  ...shopConfig,
  tools: [
    { match: "create_order", effect: "create", approval: true, idempotency_arg: "idempotency_key" },
    ...shopConfig.tools.filter((t) => t.match !== "create_order"),
  ],
  approval_wait_s: 15,
};
const order = (customer: string, qty: number) => ({
  name: "create_order",
  // The model's own idempotency_key: noise the gateway replaces with Settle's key (and leaves out of the digest).
  arguments: { customer, items: [{ sku: "SKU-7", qty }], idempotency_key: `model-${Math.random()}` },
});

describe.each<Backend>(["postgres", "pglite"])(
  "MCP gateway: approve with edits and a reply, Settle on %s",
  (backend) => {
    let settle: SettleUnderTest;
    let s: Scratch;
    let session: StdioSession;
    const orders = (customer: string) => s.ledger().filter((l) => l.kind === "order" && l.detail.customer === customer);
    /** The invocation of create_order for this customer once it awaits approval. */
    const heldFor = async (customer: string) => {
      let id = "";
      await waitUntil(`${customer}'s order awaits approval`, async () => {
        for (const item of await queueOf(settle)) {
          if (item.tool !== "create_order" || item.status !== "awaiting_approval") continue;
          const detail = await invocationOf(settle, item.invocation_id);
          if (JSON.stringify(detail.attempts).includes(customer)) id = item.invocation_id;
        }
        return id !== "";
      });
      return id;
    };

    beforeAll(async () => {
      settle = await startSettle(backend);
      s = scratch();
      session = await connectStdio(settle, s, config);
    });
    afterAll(async () => {
      await session?.close();
      await settle?.close();
    });

    it("approved with an edited quantity while held: the shop gets the edited arguments once; nothing is flagged", async () => {
      const call = session.client.callTool(order("edit-1", 5), { timeout: 30_000 });
      const id = await heldFor("edit-1");
      const edited = { customer: "edit-1", items: [{ sku: "SKU-7", qty: 2 }], note: "two, as agreed" };
      const approved = await operatorAct(settle, id, { action: "approve", arguments: edited, note: "two only" });
      expect(approved.status).toBe(200);
      const result = (await call) as any;
      expect(textOf(result)).toMatch(/^order \S+ created$/);
      const placed = orders("edit-1");
      expect(placed).toHaveLength(1);
      const key = (await invocationOf(settle, id)).idempotency_key;
      expect(placed[0]!.detail).toEqual({ ...edited, idempotency_key: key });
      await waitUntil(
        "the order's outcome is in Settle",
        async () => (await invocationOf(settle, id)).status === "succeeded",
      );
      expect(await invocationOf(settle, id)).toMatchObject({
        status: "succeeded",
        ran_with_other_arguments: false,
        arguments_review: null,
        arguments_edit: { state: "approved", arguments: edited },
      });
    });

    it("approved with edits after the gateway answered 'awaiting approval': the client's re-issue runs the edited call", async () => {
      const early = { ...config, approval_wait_s: 0.5 };
      const quick = await connectStdio(settle, s, early);
      try {
        const first = (await quick.client.callTool(order("edit-2", 9), { timeout: 30_000 })) as any;
        expect(first.structuredContent).toMatchObject({ code: "AWAITING_APPROVAL" });
        const id = first.structuredContent.invocation_id as string;
        const edited = { customer: "edit-2", items: [{ sku: "SKU-7", qty: 3 }] };
        expect((await operatorAct(settle, id, { action: "approve", arguments: edited })).status).toBe(200);
        const again = (await quick.client.callTool(order("edit-2", 9), { timeout: 30_000 })) as any;
        expect(textOf(again)).toMatch(/^order \S+ created$/);
        expect(orders("edit-2").map((o) => o.detail.items)).toEqual([edited.items]);
        await waitUntil(
          "the outcome is in Settle",
          async () => (await invocationOf(settle, id)).status === "succeeded",
        );
        expect(await invocationOf(settle, id)).toMatchObject({ ran_with_other_arguments: false });
      } finally {
        await quick.close();
      }
    });

    it("rejected with a reply while held: the reply is the tool's result; nothing is sent", async () => {
      const call = session.client.callTool(order("reply-1", 40), { timeout: 30_000 });
      const id = await heldFor("reply-1");
      const reply = "At most 10 of SKU-7 per customer; ask them which 10";
      expect((await operatorAct(settle, id, { action: "reject", reply, note: "limit" })).status).toBe(200);
      const result = (await call) as any;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ code: "REJECTED", next_action: "choose_alternative" });
      expect(textOf(result)).toContain(`They said: "${reply}"`);
      expect(orders("reply-1")).toHaveLength(0);
    });

    it("escalated with a reply while held: the reply is the tool's result; nothing is sent", async () => {
      const call = session.client.callTool(order("reply-2", 40), { timeout: 30_000 });
      const id = await heldFor("reply-2");
      const reply = "A manager decides orders over 20.";
      expect((await operatorAct(settle, id, { action: "escalate", reply, note: "over 20" })).status).toBe(200);
      const result = (await call) as any;
      expect(result.structuredContent).toMatchObject({ code: "ESCALATED" });
      expect(textOf(result)).toMatch(/^Not called: create_order was escalated by operator-\S+ \(Settle invocation /);
      expect(textOf(result)).toContain(`They said: "${reply}"`);
      expect(orders("reply-2")).toHaveLength(0);
    });
  },
);
