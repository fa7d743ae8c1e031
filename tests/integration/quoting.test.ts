import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as actions } from "@/app/api/v1/invocations/[invocation_id]/actions/route";
import { GET as queue } from "@/app/api/v1/queue/route";
import { cleanText } from "@/lib/redact/redact";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, guard, ingest } from "./routes";

// Text that ends or escapes SQL quoting when it is pasted into a query —
// quotes, backslashes, dollar quotes and their tags (`$s$` was sqlLiteral's),
// placeholders, NUL, lone surrogates — as ids, keys, tool names and messages,
// through every path that writes or searches. Settle binds every value, so
// each is stored and found as written (NUL and lone surrogates as U+FFFD).

const nasty = ["'", "\\", "$$", "$s", "k$s", "$s$", "$1", "a\u0000b", "x\ud800y", "'); DROP TABLE attempts; --"];

describe.each<Backend>(["postgres", "pglite"])("quoting on %s", (backend) => {
  let t: TestContext;
  let operator: string;
  beforeAll(async () => {
    t = await openSettle(backend);
    operator = (await createOperator(t.db, "operator")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it.each(nasty)("%j as task, invocation, key, tool and message: ingest, read, guard, act and search", async (s) => {
    const inv = `inv-${s}`;
    const key = `key-${s}`;
    const unknown = {
      ok: false,
      commit_state: "unknown",
      code: `E${s}`,
      agent_message: `upstream said ${s}`,
      next_action: "verify_operation",
    };
    const ingested = await call(ingest, {
      key: t.key,
      body: {
        event_id: `ev-${s}`,
        task_id: `task-${s}`,
        invocation_id: inv,
        idempotency_key: key,
        tool: `tool-${s}`,
        effect_class: "money",
        attempt: 1,
        envelope: unknown,
      },
    });
    expect(ingested.status).toBe(207);
    expect(ingested.body.results[0]).toMatchObject({
      status: "accepted",
      event_id: cleanText(`ev-${s}`),
      invocation_id: cleanText(inv),
    });

    const read = await call(getInvocation, { key: t.key, params: { invocation_id: inv } });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      invocation_id: cleanText(inv),
      task_id: cleanText(`task-${s}`),
      idempotency_key: cleanText(key),
      tool: cleanText(`tool-${s}`),
      status: "outcome_unknown",
    });
    expect(read.body.attempts[0]).toMatchObject({
      code: cleanText(`E${s}`),
      agent_message: cleanText(`upstream said ${s}`),
    });

    // The guard finds it by the key and refuses a second write while its outcome is unknown.
    const denied = await call(guard, {
      key: t.key,
      path: "/api/v1/guard",
      body: { task_id: `task-${s}`, tool: `tool-${s}`, idempotency_key: key },
    });
    expect(denied.status).toBe(200);
    expect(denied.body).toMatchObject({ allow: false, reason: "outcome_unknown", invocation_id: cleanText(inv) });
    // A new key with the same text is allowed, and its intent recorded.
    const allowed = await call(guard, {
      key: t.key,
      path: "/api/v1/guard",
      body: { task_id: `task-${s}`, tool: `tool-${s}`, idempotency_key: `${key}-2` },
    });
    expect(allowed.body).toMatchObject({ allow: true, reason: null });

    const acted = await call(actions, {
      key: operator,
      method: "POST",
      params: { invocation_id: inv },
      body: {
        action: "mark_reconciled",
        commit_state: "not_committed",
        note: `checked ${s}`,
        version: read.body.version,
      },
    });
    expect(acted.status).toBe(200);
    expect(acted.body).toMatchObject({
      status: "reconciled",
      actions: [expect.objectContaining({ note: cleanText(`checked ${s}`) })],
    });

    const found = await call(queue, {
      key: operator,
      path: `/api/v1/queue?status=all&q=${encodeURIComponent(cleanText(`inv-${s}`))}`,
    });
    expect(found.status).toBe(200);
    expect(found.body.items.map((i: { invocation_id: string }) => i.invocation_id)).toContain(cleanText(inv));
  });
});
