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

// The gateway over stdio, launched by the SDK's real client as an MCP host
// launches a server (`settle-mcp --config … -- <shop>`), in front of the SDK
// shop: source article 002 (docs/outcome-model.md)'s six failures and a connection that breaks mid-call
// followed by the client's re-issue. Each case checks the three things that
// matter: one business effect per intent (the shop's ledger), the answer
// the client got, and what Settle's queue holds.

const order = (customer: string) => ({
  name: "create_order",
  arguments: { customer, items: [{ sku: "SKU-1", qty: 1 }] },
});
const charge = (orderId: string) => ({
  name: "charge_card",
  arguments: { order_id: orderId, amount_cents: 1299, card_token: "tok_visa_4242" },
});
// Human decisions without a custom client: money needs a person's approval
// (effects.money.approval), the gateway holds the call on Settle's long-poll
// decision endpoint, then proceeds, refuses, or answers "awaiting approval"
// with the console link; a client that supports elicitation may choose to
// keep waiting.
const approvalSettle = (result: any) =>
  result.structuredContent as {
    code: string;
    commit_state: string;
    next_action: string;
    invocation_id: string;
    console_url: string;
  };
const approvalConfig = { ...shopConfig, effects: { money: { approval: true } }, approval_wait_s: 1.5 };
const settleOf = (result: any) =>
  result.structuredContent as {
    code: string;
    commit_state: string;
    next_action: string;
    invocation_id: string;
    not_before: string | null;
  };

describe.each<Backend>(["postgres", "pglite"])("MCP gateway over stdio, Settle on %s", (backend) => {
  let settle: SettleUnderTest;
  let s: Scratch;
  let session: StdioSession;
  const effects = (kind: string, match: (d: Record<string, unknown>) => boolean) =>
    s.ledger().filter((l) => l.kind === kind && match(l.detail));
  const queued = async (id: string) => (await queueOf(settle)).find((i) => i.invocation_id === id) ?? null;

  beforeAll(async () => {
    settle = await startSettle(backend);
    s = scratch();
    session = await connectStdio(settle, s);
  });
  afterAll(async () => {
    await session?.close();
    await settle?.close();
  });

  it("kill mid-call: the effect lands, the server dies; the answer is unknown, the re-issue is probed and found, never repeated", async () => {
    s.fault({ tool: "create_order", fault: "crash_after_effect" });
    const first = (await session.client.callTool(order("kill-1"))) as any;
    expect(first.isError).toBe(true);
    expect(settleOf(first)).toMatchObject({
      code: "OUTCOME_UNKNOWN",
      commit_state: "unknown",
      next_action: "verify_operation",
    });
    const id = settleOf(first).invocation_id;
    await waitUntil(
      "the unknown outcome is recorded",
      async () => (await invocationOf(settle, id)).status === "outcome_unknown",
    );
    expect(await queued(id)).toMatchObject({ status: "outcome_unknown", tool: "create_order" });

    // The client re-issues; the gateway restarts the server, asks get_order by key, and finds the order.
    const again = (await session.client.callTool(order("kill-1"))) as any;
    expect(settleOf(again)).toMatchObject({ code: "ALREADY_COMMITTED", commit_state: "committed", invocation_id: id });
    expect(textOf(again)).toContain("found by get_order");
    expect(effects("order", (d) => d.customer === "kill-1")).toHaveLength(1);
    const inv = await invocationOf(settle, id);
    expect(inv).toMatchObject({ status: "reconciled", commit_state: "committed", resolution: { by: "probe" } });
    expect(await queued(id)).toBeNull();
  });

  it("kill mid-call of a charge with no probe: it stays in the queue as unknown, and the re-issue is refused", async () => {
    s.fault({ tool: "charge_card", fault: "crash_after_effect" });
    const first = (await session.client.callTool(charge("ord-kill-2"))) as any;
    const id = settleOf(first).invocation_id;
    const again = (await session.client.callTool(charge("ord-kill-2"))) as any;
    expect(settleOf(again)).toMatchObject({ code: "OUTCOME_UNKNOWN", commit_state: "unknown", invocation_id: id });
    expect(textOf(again)).toMatch(/Do not retry/);
    expect(effects("charge", (d) => d.order_id === "ord-kill-2")).toHaveLength(1);
    expect(await queued(id)).toMatchObject({ status: "outcome_unknown", effect_class: "money" });
  });

  it("duplicate delivery: the same call twice at once and once more: one order, three ok answers with it", async () => {
    const [a, b] = (await Promise.all([
      session.client.callTool(order("dup-1")),
      session.client.callTool(order("dup-1")),
    ])) as any[];
    const c = (await session.client.callTool(order("dup-1"))) as any;
    for (const r of [a, b, c]) expect(r.isError).toBeFalsy();
    expect(new Set([a, b, c].map((r) => r.structuredContent.order_id)).size).toBe(1);
    expect(c._meta["settle.dev/replayed"]).toBeDefined();
    expect(effects("order", (d) => d.customer === "dup-1")).toHaveLength(1);
    // get_order has no rule: its readOnlyHint, from the tools/list that passed through, makes it a read.
    await session.client.listTools();
    await session.client.callTool({ name: "get_order", arguments: { order_id: a.structuredContent.order_id } });
    expect(await session.logFor((l) => l.tool === "get_order")).toMatchObject({ effect: "read", decision: "read" });
  });

  it("200 with an error body: a declined card is not a success; the client gets the shop's answer, nothing is charged, a fixed retry goes through", async () => {
    s.fault({ tool: "charge_card", fault: "declined" });
    const mark = session.logs().length;
    const declined = (await session.client.callTool(charge("ord-200"))) as any;
    expect(declined.isError).toBeFalsy();
    expect(textOf(declined)).toBe("card declined");
    const log = await session.logFor((l) => l.tool === "charge_card" && l.decision === "forwarded", mark);
    await waitUntil(
      "the failure is recorded",
      async () => (await invocationOf(settle, log.invocation!)).status === "failed",
    );
    expect(await invocationOf(settle, log.invocation!)).toMatchObject({
      status: "failed",
      commit_state: "not_committed",
    });
    expect(effects("charge", (d) => d.order_id === "ord-200")).toHaveLength(0);
    const paid = (await session.client.callTool(charge("ord-200"))) as any;
    expect(textOf(paid)).toContain("charged 1299");
    expect(effects("charge", (d) => d.order_id === "ord-200")).toHaveLength(1);
    expect(await queued(log.invocation!)).toBeNull();
  });

  it("slow success: an identical call while the first is still running waits for it instead of racing it", async () => {
    s.fault({ tool: "create_order", fault: "slow", ms: 1200 });
    const first = session.client.callTool(order("slow-1"));
    await new Promise((r) => setTimeout(r, 300));
    const second = session.client.callTool(order("slow-1"));
    const [a, b] = (await Promise.all([first, second])) as any[];
    expect(a.structuredContent.order_id).toBe(b.structuredContent.order_id);
    expect(await session.logFor((l) => l.decision === "joined")).toMatchObject({ tool: "create_order" });
    expect(effects("order", (d) => d.customer === "slow-1")).toHaveLength(1);
  });

  it("the client gives up and cancels after dispatch: recorded as unknown (never failed), and its re-issue does not make a second order", async () => {
    s.fault({ tool: "create_order", fault: "slow", ms: 900 });
    await expect(session.client.callTool(order("cancel-1"), { timeout: 250 })).rejects.toThrow();
    await waitUntil(
      "the cancelled call is logged",
      () => session.logs().some((l) => l.decision === "forwarded" && l.upstream === "lost:cancelled"),
      8000,
    );
    const cancelled = session.logs().find((l) => l.upstream === "lost:cancelled")!;
    await waitUntil(
      "its outcome is recorded",
      async () => (await invocationOf(settle, cancelled.invocation!)).status === "outcome_unknown",
    );
    const again = (await session.client.callTool(order("cancel-1"))) as any;
    expect(settleOf(again)).toMatchObject({ code: "ALREADY_COMMITTED", invocation_id: cancelled.invocation });
    expect(effects("order", (d) => d.customer === "cancel-1")).toHaveLength(1);
    expect((await invocationOf(settle, cancelled.invocation!)).status).toBe("reconciled");
  });

  it("partial batch: per-item outcomes in the queue, and the scoped retry of the unknown item is a new intent that goes through", async () => {
    s.fault({ tool: "send_email", fault: "relay_partial" });
    const first = (await session.client.callTool({
      name: "send_email",
      arguments: {
        to: ["ana@example.com", "ben@example.com", "not-an-address"],
        subject: "Your order",
        body: "Thanks",
      },
    })) as any;
    expect(first.structuredContent.items.map((i: any) => i.applied)).toEqual(["yes", "unknown", "no"]);
    const id = (await session.logFor((l) => l.tool === "send_email")).invocation!;
    await waitUntil("the partial outcome is queued", async () => (await queued(id)) !== null);
    expect(await queued(id)).toMatchObject({ status: "partially_applied", commit_state: "partial" });
    const inv = await invocationOf(settle, id);
    expect(inv.attempts.find((a: any) => a.phase === "outcome").items).toEqual([
      { item_id: "ana@example.com", applied: "yes", reason: null },
      { item_id: "ben@example.com", applied: "unknown", reason: "the mail relay did not answer" },
      { item_id: "not-an-address", applied: "no", reason: "not an email address" },
    ]);
    const rest = (await session.client.callTool({
      name: "send_email",
      arguments: { to: ["ben@example.com"], subject: "Your order", body: "Thanks" },
    })) as any;
    expect(rest.structuredContent.items).toEqual([{ id: "ben@example.com", applied: "yes" }]);
    expect(effects("email", (d) => d.to === "ana@example.com")).toHaveLength(1);
    expect(effects("email", (d) => d.to === "ben@example.com")).toHaveLength(1);
  });

  it("rate limit with Retry-After: the gateway answers 'retry after' without calling the server, and lets the call go once the time has passed", async () => {
    s.fault({ tool: "create_order", fault: "rate_limited", retry_after_s: 1 });
    const limited = (await session.client.callTool(order("rl-1"))) as any;
    expect(textOf(limited)).toContain("429");
    const early = (await session.client.callTool(order("rl-1"))) as any;
    expect(settleOf(early)).toMatchObject({
      code: "RETRY_LATER",
      commit_state: "not_committed",
      next_action: "wait_and_retry",
    });
    expect(Date.parse(settleOf(early).not_before!)).toBeGreaterThan(Date.now() - 500);
    expect(await session.logFor((l) => l.decision === "denied:retry_later")).toMatchObject({ tool: "create_order" });
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(settleOf(early).not_before!) - Date.now()) + 100));
    const later = (await session.client.callTool(order("rl-1"))) as any;
    expect(later.structuredContent.status).toBe("created");
    expect(effects("order", (d) => d.customer === "rl-1")).toHaveLength(1);
    await waitUntil(
      "the retry's outcome is recorded",
      async () => (await invocationOf(settle, settleOf(early).invocation_id)).status === "succeeded",
    );
  });

  it("the client's connection breaks mid-call and it re-issues from a new session: the first call finishes and is recorded, the re-issue gets its result", async () => {
    const doomed = await connectStdio(settle, s);
    s.fault({ tool: "create_order", fault: "slow", ms: 600 });
    const lost = doomed.client.callTool(order("broken-1")).catch((e: Error) => e);
    // Broken while the shop runs the call (a fixed pause lost the race on a loaded machine: the call never left).
    await waitUntil("the call reached the shop", () => !s.faultsLeft().some((f) => f.tool === "create_order"));
    await doomed.close();
    expect(await lost).toBeInstanceOf(Error);
    await waitUntil("the first call's outcome reaches Settle", () =>
      doomed.logs().some((l) => l.decision === "forwarded"),
    );

    const again = (await session.client.callTool(order("broken-1"))) as any;
    expect(again.isError).toBeFalsy();
    expect(again._meta["settle.dev/replayed"]).toBeDefined();
    const [created] = effects("order", (d) => d.customer === "broken-1");
    expect(again.structuredContent.order_id).toBe(created!.id);
    expect(effects("order", (d) => d.customer === "broken-1")).toHaveLength(1);
  });

  describe("approvals", () => {
    let s: Scratch;
    let session: StdioSession;
    let asked = 0;
    let keepWaiting = false;
    const charges = (orderId: string) => s.ledger().filter((l) => l.kind === "charge" && l.detail.order_id === orderId);
    const waitForStatus = (id: string, status: string) =>
      waitUntil(`${id} is ${status}`, async () => (await invocationOf(settle, id)).status === status);

    beforeAll(async () => {
      s = scratch();
      session = await connectStdio(settle, s, approvalConfig, { capabilities: { elicitation: {} } });
      session.client.setRequestHandler("elicitation/create", async () => {
        asked += 1;
        return { action: "accept", content: { keep_waiting: keepWaiting } };
      });
    });
    afterAll(async () => {
      await session?.close();
    });

    it("no decision within the wait: 'awaiting approval' with the console link and nothing charged; once approved, the re-issue goes through", async () => {
      asked = 0;
      keepWaiting = false;
      const waiting = (await session.client.callTool(charge("ord-appr-1"), { timeout: 20_000 })) as any;
      expect(approvalSettle(waiting)).toMatchObject({
        code: "AWAITING_APPROVAL",
        commit_state: "not_committed",
        next_action: "request_approval",
      });
      expect(approvalSettle(waiting).console_url).toContain(
        `/invocations/${encodeURIComponent(approvalSettle(waiting).invocation_id)}`,
      );
      expect(asked).toBeGreaterThan(0);
      const id = approvalSettle(waiting).invocation_id;
      expect((await queueOf(settle)).find((i) => i.invocation_id === id)).toMatchObject({
        status: "awaiting_approval",
        effect_class: "money",
      });
      expect(charges("ord-appr-1")).toHaveLength(0);

      expect((await operatorAct(settle, id, { action: "approve", note: "customer confirmed" })).status).toBe(200);
      const paid = (await session.client.callTool(charge("ord-appr-1"))) as any;
      expect(textOf(paid)).toContain("charged 1299");
      expect(charges("ord-appr-1")).toHaveLength(1);
      await waitForStatus(id, "succeeded");
    });

    it("approved while held (the client kept waiting through elicitation): the same call proceeds and charges once", async () => {
      keepWaiting = true;
      const call = session.client.callTool(charge("ord-appr-2"), { timeout: 20_000 });
      let id = "";
      await waitUntil("the request for approval is in Settle", async () => {
        const item = (await queueOf(settle)).find((i) => i.tool === "charge_card" && i.status === "awaiting_approval");
        id = item?.invocation_id ?? "";
        return id !== "";
      });
      // Past the first hold: only the client's "keep waiting" keeps the call open.
      await new Promise((r) => setTimeout(r, 1800));
      await operatorAct(settle, id, { action: "approve", note: "ok" });
      const paid = (await call) as any;
      expect(textOf(paid)).toContain("charged 1299");
      expect(charges("ord-appr-2")).toHaveLength(1);
    });

    it("rejected while held: refused with who rejected it, and never sent", async () => {
      const call = session.client.callTool(charge("ord-appr-3"), { timeout: 20_000 });
      let id = "";
      await waitUntil("awaiting approval", async () => {
        id =
          (await queueOf(settle)).find((i) => i.tool === "charge_card" && i.status === "awaiting_approval")
            ?.invocation_id ?? "";
        return id !== "";
      });
      await operatorAct(settle, id, { action: "reject", note: "fraud check failed" });
      const refused = (await call) as any;
      expect(approvalSettle(refused)).toMatchObject({ code: "REJECTED", next_action: "choose_alternative" });
      expect(textOf(refused)).toMatch(/rejected by operator-/);
      expect(charges("ord-appr-3")).toHaveLength(0);
    });
  });
});
