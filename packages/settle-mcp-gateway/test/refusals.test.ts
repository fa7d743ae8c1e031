import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.js";
import type { ToolCallParams } from "../src/forward.js";
import { createRegistry } from "../src/registry.js";
import { createSettleLink } from "../src/settle-link.js";
import { openSpool } from "../src/spool.js";
import { handleToolCall, type CallLog } from "../src/tool-call.js";

// A call Settle refuses is not forwarded, whatever its effect class says
// about an unreachable Settle: a revoked key must not turn every `send` into
// an unguarded, unrecorded call. A tool name longer than Settle's limit is
// refused before anything matches it.

const json = (status: number, code: string) =>
  new Response(
    JSON.stringify({
      ok: false,
      code,
      category: "authorization",
      commit_state: "not_committed",
      retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
      next_action: "none",
      operation_ref: "x",
      safe_details: {},
      agent_message: code,
      user_message: code,
    }),
    { status, headers: { "content-type": "application/json" } },
  );

function gateway(
  status: number,
  code: string,
  config: object = {
    tools: [
      { match: "send_*", effect: "send" },
      { match: "get_*", effect: "read" },
    ],
  },
) {
  const errors: string[] = [];
  const logs: CallLog[] = [];
  const settle = createSettleLink({
    url: "http://settle.test",
    key: "stl_rk_revoked",
    spool: openSpool(mkdtempSync(path.join(tmpdir(), "settle-mcp-refusals-"))),
    fastTimeoutMs: 500,
    drainEveryMs: 60_000,
    fetch: (async () => json(status, code)) as typeof fetch,
    onError: (m) => errors.push(m),
  });
  const deps = {
    config: parseConfig(config, "t"),
    settle,
    registry: createRegistry(),
    annotations: () => undefined,
    log: (l: CallLog) => logs.push(l),
    consoleLink: () => null,
    now: () => new Date(),
  };
  const sent: ToolCallParams[] = [];
  const call = (params: ToolCallParams) =>
    handleToolCall(
      deps,
      { params, sessionTask: "s", cancelled: new AbortController().signal, elicit: null },
      async (p) => {
        sent.push(p);
        return { kind: "result", result: { content: [{ type: "text", text: "done" }] } };
      },
    );
  return { call, sent, errors, logs, close: () => settle.close() };
}

const structured = (reply: Awaited<ReturnType<ReturnType<typeof gateway>["call"]>>) =>
  reply.kind === "result" ? (reply.result.structuredContent as Record<string, unknown>) : null;

describe("Settle's refusals refuse the call", () => {
  it("with the key revoked (401), a send (fail-open when Settle is down) is not forwarded, and the log says why", async () => {
    const g = gateway(401, "UNAUTHENTICATED");
    const reply = await g.call({ name: "send_email", arguments: { to: "a@example.com" } });
    expect(g.sent).toEqual([]);
    expect(structured(reply)).toMatchObject({
      code: "SETTLE_REFUSED",
      commit_state: "not_committed",
      next_action: "escalate",
    });
    expect(g.errors.join("\n")).toMatch(/refused the gateway's key/);
    expect(g.logs.at(-1)?.decision).toBe("refused:settle_401");
    g.close();
  });

  it("a 403 likewise; a guard 400 refuses the call too, asking for a corrected call", async () => {
    const forbidden = gateway(403, "FORBIDDEN");
    await forbidden.call({ name: "send_email", arguments: {} });
    expect(forbidden.sent).toEqual([]);
    forbidden.close();
    const invalid = gateway(400, "VALIDATION_FAILED");
    const reply = await invalid.call({ name: "send_email", arguments: {} });
    expect(invalid.sent).toEqual([]);
    expect(structured(reply)).toMatchObject({ code: "SETTLE_REFUSED", next_action: "correct_input" });
    invalid.close();
  });

  it("a guard 404 (SETTLE_URL is not Settle's API) refuses the call and asks for the setup to be fixed, not the call", async () => {
    const g = gateway(404, "NOT_FOUND");
    const reply = await g.call({ name: "send_email", arguments: {} });
    expect(g.sent).toEqual([]);
    expect(structured(reply)).toMatchObject({ code: "SETTLE_REFUSED", next_action: "escalate" });
    expect(g.logs.at(-1)?.decision).toBe("refused:settle_404");
    g.close();
  });

  it("a read is never guarded, so it goes through (its records wait in the spool)", async () => {
    const g = gateway(400, "VALIDATION_FAILED");
    const reply = await g.call({ name: "get_order", arguments: { id: 1 } });
    expect(g.sent).toHaveLength(1);
    expect(reply.kind === "result" && reply.result.isError).not.toBe(true);
    g.close();
  });
});

describe("tool names", () => {
  it("refuses a name over 200 characters before classifying or forwarding it", async () => {
    const g = gateway(200, "unused", { tools: [{ match: "*.*.*.*.create", effect: "money" }] });
    const reply = await g.call({ name: `${".".repeat(349)}x`, arguments: {} });
    expect(g.sent).toEqual([]);
    expect(structured(reply)).toMatchObject({ code: "INVALID_REQUEST", next_action: "correct_input" });
    expect(g.logs.at(-1)?.decision).toBe("refused:tool_name_too_long");
    g.close();
  });
});
