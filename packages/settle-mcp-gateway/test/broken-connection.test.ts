import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSettleCatalog } from "../src/settle-catalog.js";
import { createSettleLink, isUnreachable } from "../src/settle-link.js";
import { openSpool } from "../src/spool.js";

// A connection to Settle that breaks before any byte of the answer (a pooled connection Settle had
// closed) costs the gateway nothing: the guard, a decision, a report and the catalog read are sent
// again at once, once (docs/outcome-model.md §5), on top of their retries, instead of counting as a
// retry: the guard and decisions have one, reports two, so a break and then a failed retry is still
// answered, where before it made Settle "unreachable" (a write refused or failed open, a record spooled).

const reset = () =>
  new TypeError("fetch failed", { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) });
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** A fetch that breaks the first `breaks(path)` requests to each path, then answers. */
function breakingFirst(answer: (path: string) => Response, breaks: (path: string) => number = () => 1) {
  const sent: string[] = [];
  const fetch = (async (input: string) => {
    const { pathname } = new URL(input);
    sent.push(pathname);
    if (sent.filter((p) => p === pathname).length <= breaks(pathname)) throw reset();
    return answer(pathname);
  }) as typeof globalThis.fetch;
  return { fetch, sent };
}

const decision = {
  invocation_id: "inv-1",
  status: "succeeded",
  decision: "do_not_retry",
  commit_state: "committed",
  reason: null,
  decided_by: null,
  decided_at: null,
  version: 1,
};

describe("a connection that breaks before Settle's answer", () => {
  it("the guard, a decision and a report are answered after a break and a failed retry, nothing spooled", async () => {
    // Each breaks once more than its client has retries: the resend at once is what answers it.
    const { fetch, sent } = breakingFirst(
      (p) => {
        if (p === "/api/v1/guard") return json(200, { allow: true, reason: null, invocation_id: "inv-1", attempt: 1 });
        if (p.endsWith("/decision")) return json(200, decision);
        return json(207, { results: [{ index: 0, status: "accepted", event_id: "e-1", invocation_id: "inv-1" }] });
      },
      (p) => (p === "/api/v1/envelopes" ? 3 : 2),
    );
    const spool = openSpool(mkdtempSync(path.join(tmpdir(), "settle-mcp-broken-")));
    const link = createSettleLink({
      url: "http://settle.test",
      key: "stl_rk_test",
      spool,
      fastTimeoutMs: 2_000,
      drainEveryMs: 60_000,
      fetch,
    });
    const guard = await link.guard({ task_id: "t", tool: "send_email", idempotency_key: "k" });
    const read = await link.getDecision("inv-1");
    expect(isUnreachable(guard) || isUnreachable(read)).toBe(false);
    expect(guard).toMatchObject({ allow: true });
    expect(read).toMatchObject({ decision: "do_not_retry" });
    expect(await link.reportNow([{ event_id: "e-1", task_id: "t", invocation_id: "inv-1", tool: "send_email" }])).toBe(
      true,
    );
    expect(link.backlog().spooled).toBe(0);
    const count = (p: string) => sent.filter((s) => s === p).length;
    expect([count("/api/v1/guard"), count("/api/v1/invocations/inv-1/decision"), count("/api/v1/envelopes")]).toEqual([
      3, 3, 4,
    ]);
    link.close();
  });

  it("the tool catalog is read again at once", async () => {
    const { fetch, sent } = breakingFirst(() => json(200, { items: [{ pattern: "charge_*", effect_class: "money" }] }));
    const errors: string[] = [];
    const catalog = createSettleCatalog({
      url: "http://settle.test",
      key: "stl_rk_test",
      refreshMs: 60_000,
      timeoutMs: 1_000,
      fetch,
      onError: (m) => errors.push(m),
    });
    expect(await catalog.refresh()).toBe(true);
    expect(catalog.effectFor("charge_card")).toBe("money");
    expect(sent).toHaveLength(2);
    expect(errors).toEqual([]);
    catalog.close();
  });
});
