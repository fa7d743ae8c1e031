import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { acceptedContent, inputRequired, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

// A small shop as a real MCP server on the SDK: create_order, charge_card,
// send_email, get_order. Every business effect is a line in a ledger file
// (SHOP_LEDGER), so a test counts effects from outside the process, across
// crashes. Faults are read from SHOP_FAULTS (one JSON object a line, the
// first one for the tool is used up by its next call): source article 002 (docs/outcome-model.md)'s six
// failures, and a stream that breaks after the effect. The shop does not
// de-duplicate anything itself: what keeps effects single is the gateway.

export type Fault =
  | {
      tool: string;
      fault: "crash_after_effect" | "crash_before_effect" | "declined" | "break_stream_after_effect" | "relay_partial";
    }
  | { tool: string; fault: "slow"; ms: number }
  | { tool: string; fault: "rate_limited"; retry_after_s: number };

export type LedgerLine = {
  kind: "order" | "charge" | "email";
  tool: string;
  id: string;
  key: string | null;
  at: string;
  detail: Record<string, unknown>;
};

export type ShopHooks = { breakStream: () => void };

// The fixture's own process reads its settings; the gateway's code never does.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const ledgerFile = () => env.SHOP_LEDGER ?? "/dev/null";

function takeFault(tool: string): Fault | null {
  const file = env.SHOP_FAULTS;
  if (!file || !existsSync(file)) return null;
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const faults = lines.map((l) => JSON.parse(l) as Fault);
  const at = faults.findIndex((f) => f.tool === tool);
  if (at === -1) return null;
  const [fault] = faults.splice(at, 1);
  writeFileSync(file, faults.map((f) => JSON.stringify(f)).join("\n") + (faults.length ? "\n" : ""));
  return fault ?? null;
}

function record(line: Omit<LedgerLine, "at" | "id"> & { id?: string }): LedgerLine {
  const full = { id: line.id ?? randomUUID().slice(0, 8), at: new Date().toISOString(), ...line } as LedgerLine;
  appendFileSync(ledgerFile(), JSON.stringify(full) + "\n");
  return full;
}

export function readLedger(file: string): LedgerLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as LedgerLine);
}

const keyOf = (meta: Record<string, unknown> | undefined) =>
  typeof meta?.["settle.dev/idempotency_key"] === "string" ? (meta["settle.dev/idempotency_key"] as string) : null;
const text = (t: string) => [{ type: "text" as const, text: t }];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the fault that comes before the effect; returns an answer when the fault answers instead of the shop. */
async function before(fault: Fault | null) {
  if (!fault) return null;
  if (fault.fault === "crash_before_effect") process.exit(17);
  if (fault.fault === "slow") await sleep(fault.ms);
  if (fault.fault === "rate_limited") {
    return {
      content: text(`429 Too Many Requests: retry after ${fault.retry_after_s} s`),
      isError: true,
      structuredContent: {
        outcome: "retryable",
        effect_applied: "no",
        retry_after_s: fault.retry_after_s,
        message: "rate limited",
      },
    };
  }
  return null;
}

function after(fault: Fault | null, hooks: ShopHooks): void {
  if (fault?.fault === "crash_after_effect") process.exit(17);
  if (fault?.fault === "break_stream_after_effect") hooks.breakStream();
}

const confirmation = z.object({ confirm: z.boolean() });

export function createShop(hooks: ShopHooks): McpServer {
  const server = new McpServer({ name: "shop", version: "1.0.0" }, { capabilities: { tools: {} } });

  server.registerTool(
    "create_order",
    {
      description: "Creates an order.",
      inputSchema: z.object({
        customer: z.string(),
        items: z.array(z.object({ sku: z.string(), qty: z.number().int().positive() })),
        note: z.string().optional(),
        idempotency_key: z.string().optional(),
      }),
      outputSchema: z.object({ order_id: z.string(), status: z.string() }),
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    async (args, ctx) => {
      // note "confirm": the 2026-07-28 way to ask first — an input_required result, and the client's answer in a new request.
      if (
        args.note === "confirm" &&
        acceptedContent(ctx.mcpReq.inputResponses, "confirm", confirmation)?.confirm !== true
      ) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Place the order for ${args.customer}?`,
              requestedSchema: confirmation,
            }),
          },
        });
      }
      const fault = takeFault("create_order");
      const early = await before(fault);
      if (early) return early;
      const order = record({ kind: "order", tool: "create_order", key: keyOf(ctx.mcpReq._meta), detail: args });
      after(fault, hooks);
      return {
        content: text(`order ${order.id} created`),
        structuredContent: { order_id: order.id, status: "created" },
      };
    },
  );

  server.registerTool(
    "charge_card",
    {
      description: "Charges a card.",
      inputSchema: z.object({
        order_id: z.string(),
        amount_cents: z.number().int().positive(),
        card_token: z.string(),
      }),
      annotations: { readOnlyHint: true },
    },
    async (args, ctx) => {
      const fault = takeFault("charge_card");
      if (fault?.fault === "declined") {
        // A 200 whose body is an error (source article 002 (docs/outcome-model.md) fixture 3): isError is not set, the body says it failed.
        return {
          content: text("card declined"),
          structuredContent: { outcome: "permanent", effect_applied: "no", message: "card declined by the issuer" },
        };
      }
      const early = await before(fault);
      if (early) return early;
      const charge = record({
        kind: "charge",
        tool: "charge_card",
        key: keyOf(ctx.mcpReq._meta),
        detail: { order_id: args.order_id, amount_cents: args.amount_cents },
      });
      after(fault, hooks);
      return {
        content: text(`charged ${args.amount_cents} to ${args.order_id} (charge ${charge.id})`),
        structuredContent: { charge_id: charge.id },
      };
    },
  );

  server.registerTool(
    "send_email",
    {
      description: "Sends one email to each address.",
      inputSchema: z.object({ to: z.array(z.string()), subject: z.string(), body: z.string() }),
      annotations: { destructiveHint: false },
    },
    async (args, ctx) => {
      const fault = takeFault("send_email");
      const early = await before(fault);
      if (early) return early;
      let relayed = 0;
      const items = args.to.map((address) => {
        if (!address.includes("@")) return { id: address, applied: "no" as const, reason: "not an email address" };
        // The relay takes the first message and then stops answering (source article 002 (docs/outcome-model.md) fixture 5).
        if (fault?.fault === "relay_partial" && (relayed += 1) > 1)
          return { id: address, applied: "unknown" as const, reason: "the mail relay did not answer" };
        record({
          kind: "email",
          tool: "send_email",
          key: keyOf(ctx.mcpReq._meta),
          detail: { to: address, subject: args.subject },
        });
        return { id: address, applied: "yes" as const };
      });
      after(fault, hooks);
      const sent = items.filter((i) => i.applied === "yes").length;
      const partial = sent !== items.length;
      const envelope = {
        outcome: partial ? "permanent" : "ok",
        effect_applied: partial ? (sent > 0 ? "partial" : "no") : "yes",
        items,
        message: `${sent} of ${items.length} sent`,
      };
      return { content: text(envelope.message), structuredContent: envelope, ...(partial ? { isError: true } : {}) };
    },
  );

  server.registerTool(
    "get_order",
    {
      description: "Looks an order up by id or by the idempotency key it was created with.",
      inputSchema: z.object({ order_id: z.string().optional(), idempotency_key: z.string().optional() }),
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      const order = readLedger(ledgerFile()).find(
        (l) =>
          l.kind === "order" &&
          ((args.order_id && l.id === args.order_id) || (args.idempotency_key && l.key === args.idempotency_key)),
      );
      return order
        ? {
            content: text(`order ${order.id}`),
            structuredContent: { found: true, order_id: order.id, customer: order.detail.customer },
          }
        : { content: text("no such order"), structuredContent: { found: false } };
    },
  );

  return server;
}
