import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import {
  connectStdio,
  invocationOf,
  scratch,
  shopConfig,
  startSettle,
  waitUntil,
  type Scratch,
  type SettleUnderTest,
  type StdioSession,
} from "./mcp-gateway-support";

// The real `settle-mcp` bin with settle_catalog on: effect classes come from
// Settle's tool catalog for its key's runtime where the configuration file
// has no rule, and the file's rules still win.

describe("MCP gateway with settle_catalog (stdio, PostgreSQL)", () => {
  let settle: SettleUnderTest;
  let s: Scratch;
  let session: StdioSession;

  beforeAll(async () => {
    settle = await startSettle("postgres");
    // charge_card has a rule in the file (money): the catalog's read must not win over it.
    await addToolCatalogEntry(
      settle.ctx.db,
      { runtime: settle.ctx.runtime, pattern: "charge_*", effect_class: "read" },
      "admin@example.com",
    );
    // send_email has none: the catalog's class beats the server's annotation (destructiveHint false: create).
    await addToolCatalogEntry(
      settle.ctx.db,
      { runtime: settle.ctx.runtime, pattern: "send_*", effect_class: "destructive" },
      "admin@example.com",
    );
    s = scratch();
    const config = {
      ...shopConfig,
      tools: shopConfig.tools.filter((t) => t.match !== "send_email"),
      settle_catalog: true,
    };
    session = await connectStdio(settle, s, config);
  });
  afterAll(async () => {
    await session?.close();
    await settle?.close();
  });

  it("classifies send_email from the catalog and charge_card from the file, and Settle records those classes", async () => {
    await waitUntil(
      "the gateway read the catalog",
      () => session.stderr().includes("2 effect classes from Settle's tool catalog"),
      5000,
    );
    const sent = (await session.client.callTool({
      name: "send_email",
      arguments: { to: ["a@example.com"], subject: "hi", body: "hello" },
    })) as any;
    expect(sent.isError).toBeFalsy();
    const sendLog = await session.logFor((l) => l.tool === "send_email");
    expect(sendLog.effect).toBe("destructive");

    const charged = (await session.client.callTool({
      name: "charge_card",
      arguments: { order_id: "ord-cat-1", amount_cents: 500, card_token: "tok_visa_4242" },
    })) as any;
    expect(charged.isError).toBeFalsy();
    const chargeLog = await session.logFor((l) => l.tool === "charge_card");
    expect(chargeLog.effect).toBe("money");

    await waitUntil(
      "both invocations are recorded",
      async () =>
        (await invocationOf(settle, sendLog.invocation!)).effect_class === "destructive" &&
        (await invocationOf(settle, chargeLog.invocation!)).effect_class === "money",
    );
  });
});
