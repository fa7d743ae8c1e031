import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actOnInvocation } from "@/lib/invocations/act";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { createWebhookEndpoint } from "@/lib/webhooks/endpoints";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

// The write path's statement (lib/write/write-statement.ts) records every
// status change, on both databases, whichever writer made it (ingest, an
// operator). A change waits for the webhook fan-out only when the runtime has
// an endpoint to tell.

describe.each<Backend>(["postgres", "pglite"])("invocation transitions on %s", (backend) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle(backend, { SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("records the first state, each evidence change and an operator's settlement, and nothing for unchanged states", async () => {
    await createWebhookEndpoint(t.db, { runtime: t.runtime, url: "http://127.0.0.1:9/hook" }, "admin@example.com");
    const base = {
      task_id: "tr-1",
      invocation_id: "tr-inv",
      tool: "create_invoice",
      effect_class: "create",
      idempotency_key: "k-tr",
    };
    await call(ingest, {
      key: t.key,
      body: { ...base, event_id: "tr-i1", attempt: 1, phase: "intent", at: "2026-12-01T01:00:00Z" },
    });
    await call(ingest, {
      key: t.key,
      body: {
        ...base,
        event_id: "tr-o1",
        attempt: 1,
        at: "2026-12-01T01:00:05Z",
        envelope: { title: "Gateway Timeout", status: 504 },
      },
    });
    await call(ingest, {
      key: t.key,
      body: { ...base, event_id: "tr-i1-again", attempt: 1, phase: "intent", at: "2026-12-01T01:00:00Z" },
    });
    const { version } = await t.db.prisma.invocation.findFirstOrThrow({ where: { invocationId: "tr-inv" } });
    const done = await actOnInvocation(
      t.db,
      { invocationId: "tr-inv" },
      { action: "mark_reconciled", commit_state: "not_committed", note: "no invoice" },
      { actor: "ana", version, now: new Date("2026-12-01T02:00:00Z") },
    );
    expect(done.ok).toBe(true);

    const rows = await t.db.prisma.invocationTransition.findMany({ orderBy: { id: "asc" } });
    expect(rows.map((r) => [r.fromStatus, r.toStatus, r.commitState, r.resolutionBy, r.at.toISOString()])).toEqual([
      [null, "pending", "unknown", null, "2026-12-01T01:00:00.000Z"],
      ["pending", "outcome_unknown", "unknown", null, "2026-12-01T01:00:05.000Z"],
      ["outcome_unknown", "reconciled", "not_committed", "operator", "2026-12-01T02:00:00.000Z"],
    ]);
    expect(rows.every((r) => r.tool === "create_invoice" && r.effectClass === "create" && !r.fannedOut)).toBe(true);
  });

  it("a runtime with no webhook endpoint has nobody to tell: its changes are written as fanned out", async () => {
    const { key } = await createRuntimeKey(t.db, "rt-no-hooks");
    await call(ingest, {
      key,
      body: {
        event_id: "nh-1",
        task_id: "nh",
        invocation_id: "nh-inv",
        tool: "send_email",
        attempt: 1,
        envelope: { outcome: "ok", effect_applied: "yes" },
      },
    });
    const rows = await t.db.prisma.invocationTransition.findMany({ where: { tool: "send_email" } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ toStatus: "succeeded", fannedOut: true });
  });
});
