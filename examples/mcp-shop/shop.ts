import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

// A small shop as an MCP server on the official SDK, for `npm run example:mcp`:
// create_order, charge_card, and get_order (the read that settles an unknown
// create_order). Its orders and charges live in a JSON file (SHOP_STATE), so
// they survive the shop's process. The switch: while the file SHOP_BREAK
// names a tool, that tool's next call does its effect and then the process
// dies before it answers — the broken stream that makes an outcome unknown.

// The example's own process reads its settings; Settle's code never does.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const stateFile = env.SHOP_STATE ?? "mcp-shop-state.json";
const breakFile = env.SHOP_BREAK;

type Order = { id: string; key: string | null; customer: string; items: { sku: string; qty: number }[] };
type Charge = { id: string; key: string | null; order_id: string; amount_cents: number };
type State = { orders: Order[]; charges: Charge[] };

const read = (): State =>
  existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, "utf8")) as State) : { orders: [], charges: [] };
const write = (state: State) => writeFileSync(stateFile, JSON.stringify(state, null, 2));

/** The gateway passes Settle's idempotency key in _meta; a real provider would take it as a request header. */
const keyOf = (meta: Record<string, unknown> | undefined) => {
  const key = meta?.["settle.dev/idempotency_key"];
  return typeof key === "string" ? key : null;
};
const text = (t: string) => [{ type: "text" as const, text: t }];

function breakIfSwitched(tool: string): void {
  if (!breakFile || !existsSync(breakFile) || readFileSync(breakFile, "utf8").trim() !== tool) return;
  rmSync(breakFile);
  process.exit(1); // the effect is in the file; the answer never leaves
}

const server = new McpServer({ name: "mcp-shop", version: "1.0.0" }, { capabilities: { tools: {} } });

server.registerTool(
  "create_order",
  {
    description: "Creates an order for a customer.",
    inputSchema: z.object({
      customer: z.string(),
      items: z.array(z.object({ sku: z.string(), qty: z.number().int().positive() })),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  async (args, ctx) => {
    const state = read();
    const order = { id: `o-${randomUUID().slice(0, 6)}`, key: keyOf(ctx.mcpReq._meta), ...args };
    write({ ...state, orders: [...state.orders, order] });
    breakIfSwitched("create_order");
    return { content: text(`order ${order.id} created`), structuredContent: { order_id: order.id } };
  },
);

server.registerTool(
  "charge_card",
  {
    description: "Charges the card on file for an order.",
    inputSchema: z.object({ order_id: z.string(), amount_cents: z.number().int().positive() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  async (args, ctx) => {
    const state = read();
    const charge = { id: `ch-${randomUUID().slice(0, 6)}`, key: keyOf(ctx.mcpReq._meta), ...args };
    write({ ...state, charges: [...state.charges, charge] });
    breakIfSwitched("charge_card");
    return {
      content: text(`charged ${args.amount_cents} cents (${charge.id})`),
      structuredContent: { charge_id: charge.id },
    };
  },
);

server.registerTool(
  "get_order",
  {
    description: "Looks an order up by id, or by the idempotency key it was created with.",
    inputSchema: z.object({ order_id: z.string().optional(), idempotency_key: z.string().optional() }),
    annotations: { readOnlyHint: true },
  },
  async (args) => {
    const order = read().orders.find(
      (o) => (args.order_id && o.id === args.order_id) || (args.idempotency_key && o.key === args.idempotency_key),
    );
    return order
      ? { content: text(`order ${order.id}`), structuredContent: { found: true, order_id: order.id } }
      : { content: text("no such order"), structuredContent: { found: false } };
  },
);

await serveStdio(() => server);
