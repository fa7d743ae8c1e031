import { describe, expect, it } from "vitest";
import { normalizeEnvelope } from "@/lib/ingest/normalize";
import { gatewayAnswer } from "../src/answers.js";
import { outcomeEnvelope, type UpstreamAnswer } from "../src/outcomes.js";
import { probeEnvelope } from "../src/probe.js";

// What the gateway reports is read by Settle's own adapters, so these tests
// read it the same way: a lost answer is unknown for a write (never a
// failure) and not committed for a read; only evidence makes it definite.

const read = (envelope: unknown, isWrite = true) =>
  normalizeEnvelope(envelope, { isWrite, at: "2026-12-01T10:00:00.000Z" });

describe("outcome envelopes, as Settle reads them", () => {
  it.each<[string, UpstreamAnswer["kind"] extends never ? never : UpstreamAnswer]>([
    ["stream broken", { kind: "lost", why: "stream_broken", detail: "reset" }],
    ["server crashed", { kind: "lost", why: "crashed", detail: "exit 17" }],
    ["timed out", { kind: "lost", why: "timeout", detail: "120 s" }],
    ["cancelled after dispatch", { kind: "lost", why: "cancelled", detail: "by the client" }],
    ["an internal error of the server", { kind: "error", error: { code: -32603, message: "boom" } }],
  ])("%s: unknown for a write, not committed for a read, in the mcp dialect", (_, answer) => {
    const envelope = outcomeEnvelope("create_order", answer);
    expect(read(envelope)).toMatchObject({ dialect: "mcp", commit_state: "unknown", next_action: "verify_operation" });
    expect(read(envelope, false)).toMatchObject({ commit_state: "not_committed" });
  });

  it("a result is reported exactly as the server sent it", () => {
    const result = { content: [{ type: "text", text: "order 7 created" }], structuredContent: { order_id: "7" } };
    expect(outcomeEnvelope("create_order", { kind: "result", result })).toBe(result);
    expect(read(result)).toMatchObject({ dialect: "mcp", commit_state: "committed" });
  });

  it("invalid params, refused by the server's protocol layer before running: not committed, correct the input", () => {
    expect(
      read(outcomeEnvelope("create_order", { kind: "error", error: { code: -32602, message: "items: required" } })),
    ).toMatchObject({
      dialect: "settle",
      wrapper_dialect: "mcp",
      commit_state: "not_committed",
      next_action: "correct_input",
    });
  });

  it("never sent, or refused by the HTTP endpoint: not committed, may go again", () => {
    for (const answer of [
      { kind: "not_sent", detail: "ECONNREFUSED" },
      { kind: "refused", status: 404, detail: "session not found" },
    ] as UpstreamAnswer[]) {
      expect(read(outcomeEnvelope("create_order", answer))).toMatchObject({
        commit_state: "not_committed",
        next_action: "wait_and_retry",
        dispatch_stage: "pre_dispatch",
      });
    }
  });

  it("probe records: found is committed, absent not committed, a failed probe unknown", () => {
    expect(read(probeEnvelope("get_order", { found: true }))).toMatchObject({ commit_state: "committed" });
    expect(read(probeEnvelope("get_order", { found: false }))).toMatchObject({ commit_state: "not_committed" });
    expect(read(probeEnvelope("get_order", { failed: "timeout" }))).toMatchObject({ commit_state: "unknown" });
  });
});

describe("the gateway's own answers to the client", () => {
  it("are one line of text, isError, and Settle's envelope with the invocation, commit state, next action and not_before", () => {
    const answer = gatewayAnswer("retry_later", {
      tool: "create_order",
      invocationId: "t:k",
      idempotencyKey: "k",
      notBefore: "2026-12-01T10:00:30.000Z",
    });
    expect(answer.isError).toBe(true);
    expect(answer.content).toHaveLength(1);
    expect(answer.content[0]!.text).not.toContain("\n");
    expect(answer.structuredContent).toMatchObject({
      ok: false,
      code: "RETRY_LATER",
      commit_state: "not_committed",
      next_action: "wait_and_retry",
      invocation_id: "t:k",
      not_before: "2026-12-01T10:00:30.000Z",
    });
    // Settle reads its own envelope back as written.
    expect(read(answer.structuredContent)).toMatchObject({
      dialect: "settle",
      commit_state: "not_committed",
      retry: { not_before: "2026-12-01T10:00:30.000Z" },
    });
  });

  it.each([
    ["already_committed", "committed", "none"],
    ["outcome_unknown", "unknown", "verify_operation"],
    ["in_flight", "unknown", "wait_and_retry"],
    ["awaiting_approval", "not_committed", "request_approval"],
    ["settle_unreachable", "not_committed", "wait_and_retry"],
    ["lost", "unknown", "verify_operation"],
  ] as const)("%s says %s, %s", (kind, commit, next) => {
    expect(
      gatewayAnswer(kind, { tool: "charge_card", invocationId: "i", idempotencyKey: "k" }).structuredContent,
    ).toMatchObject({ commit_state: commit, next_action: next });
  });
});
