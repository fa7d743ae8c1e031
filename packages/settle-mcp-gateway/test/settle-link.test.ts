import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SettleRecord } from "@settle/client";
import { attemptRecord } from "../src/records.js";
import { createSettleLink, isUnreachable } from "../src/settle-link.js";
import { openSpool } from "../src/spool.js";

// Only Settle's absence (no answer, a 5xx, a 429) is "unreachable", where an
// effect class may fail open; an answer that says no (401/403 for the key,
// 400 for the request) is a refusal. A record Settle refuses is dead-lettered
// once instead of being sent again forever.

const envelope = (status: number, code: string) => ({
  ok: false,
  code,
  category: "validation",
  commit_state: "not_committed",
  retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
  next_action: "correct_input",
  operation_ref: "x",
  safe_details: {},
  agent_message: `HTTP ${status}`,
  user_message: `HTTP ${status}`,
});
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const guardInput = { task_id: "t", tool: "send_email", idempotency_key: "k", at: new Date().toISOString() };
const TRUNCATED_KEY = "settle.dev/truncated";
const isRefused = (v: unknown): v is { refused: true; key: boolean; status: number } =>
  typeof v === "object" && v !== null && (v as { refused?: unknown }).refused === true;
const spoolDir = () => mkdtempSync(path.join(tmpdir(), "settle-mcp-link-"));

function linkAnswering(answer: (url: string, body: string) => Response | Promise<Response>) {
  const errors: string[] = [];
  const spool = openSpool(spoolDir());
  const link = createSettleLink({
    url: "http://settle.test",
    key: "stl_rk_test",
    spool,
    fastTimeoutMs: 500,
    drainEveryMs: 60_000,
    fetch: (async (input: string, init?: RequestInit) =>
      answer(String(input), String(init?.body ?? ""))) as typeof fetch,
    onError: (m) => errors.push(m),
  });
  return { link, spool, errors };
}

describe("what counts as Settle unreachable", () => {
  it("a revoked key (401) and a forbidden one (403) are refusals of the key, said loudly", async () => {
    for (const status of [401, 403]) {
      const { link, errors } = linkAnswering(() =>
        json(status, envelope(status, status === 401 ? "UNAUTHENTICATED" : "FORBIDDEN")),
      );
      const got = await link.guard(guardInput);
      expect(isUnreachable(got)).toBe(false);
      expect(isRefused(got) && got.key && got.status === status).toBe(true);
      expect(errors.join("\n")).toMatch(/refused the gateway's key/);
      link.close();
    }
  });

  it("a 400 is a refusal of the request, not of the key", async () => {
    const { link } = linkAnswering(() => json(400, envelope(400, "VALIDATION_FAILED")));
    const got = await link.guard(guardInput);
    expect(isRefused(got) && !got.key && got.status === 400).toBe(true);
    link.close();
  });

  it("another 4xx (a 404 from an address that is not Settle's API) is a refusal of the setup", async () => {
    const { link, errors } = linkAnswering(
      () => new Response("<html>not found</html>", { status: 404, headers: { "content-type": "text/html" } }),
    );
    const got = await link.guard(guardInput);
    expect(isRefused(got) && !got.key && got.status === 404).toBe(true);
    expect((got as { blame?: string }).blame).toBe("setup");
    expect(errors.join("\n")).toMatch(/SETTLE_URL/);
    link.close();
  });

  it("no answer, a 5xx and a 429 are unreachable", async () => {
    for (const answer of [
      () => Promise.reject(new TypeError("fetch failed")),
      () => json(503, {}),
      () => json(429, envelope(429, "RATE_LIMITED")),
    ]) {
      const { link } = linkAnswering(answer);
      expect(isUnreachable(await link.guard(guardInput))).toBe(true);
      link.close();
    }
  });
});

describe("records Settle refuses", () => {
  const ref = {
    taskId: "t",
    invocationId: "inv",
    attempt: 1,
    tool: "create_order",
    idempotencyKey: "k",
    effect: "create" as const,
    argsDigest: "sha256:x",
    arguments: null,
  };

  it("a record over Settle's limit is dead-lettered once (413), and the record beside it is sent", async () => {
    const posted: string[][] = [];
    const { link, spool, errors } = linkAnswering((_url, body) => {
      const records = (JSON.parse(body) as { records: SettleRecord[] }).records;
      if (body.length > 200_000) return json(413, envelope(413, "PAYLOAD_TOO_LARGE"));
      posted.push(records.map((r) => r.event_id!));
      return json(207, {
        results: records.map((r, index) => ({
          index,
          status: "accepted",
          event_id: r.event_id,
          invocation_id: r.invocation_id,
        })),
      });
    });
    const big: SettleRecord = {
      event_id: "big",
      task_id: "t",
      invocation_id: "i",
      tool: "x",
      phase: "outcome",
      envelope: { content: [{ type: "text", text: "x".repeat(300_000) }] },
    };
    const small: SettleRecord = { event_id: "small", task_id: "t", invocation_id: "i", tool: "x", phase: "outcome" };
    spool.add([big, small]);
    await link.flush();
    expect(posted.flat()).toContain("small");
    expect(spool.deadLettered()).toBe(1);
    const dead = readFileSync(spool.deadLetterFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(dead).toHaveLength(1);
    expect(dead[0].record.event_id).toBe("big");
    expect(dead[0].reason).toMatch(/413/);
    expect(errors.filter((e) => e.includes("big"))).toHaveLength(1);
    await link.flush();
    expect(spool.deadLettered()).toBe(1);
    link.close();
  });

  it("a record Settle rejects in its 207 is dead-lettered with Settle's reason", async () => {
    const { link, spool } = linkAnswering((_url, body) => {
      const records = (JSON.parse(body) as { records: SettleRecord[] }).records;
      return json(207, {
        results: records.map((r, index) => ({
          index,
          status: "rejected",
          event_id: r.event_id,
          invocation_id: null,
          error: envelope(400, "ENVELOPE_TOO_DEEP"),
        })),
      });
    });
    expect(
      await link.reportNow([{ event_id: "deep", task_id: "t", invocation_id: "i", tool: "x", phase: "outcome" }]),
    ).toBe(true);
    expect(readFileSync(spool.deadLetterFile, "utf8")).toMatch(/ENVELOPE_TOO_DEEP/);
    link.close();
  });

  it("keeps records while the key is refused: a new key sends them", async () => {
    const { link, spool } = linkAnswering(() => json(401, envelope(401, "UNAUTHENTICATED")));
    expect(
      await link.reportNow([{ event_id: "e", task_id: "t", invocation_id: "i", tool: "x", phase: "outcome" }]),
    ).toBe(false);
    expect(spool.pending()).toBe(1);
    expect(spool.deadLettered()).toBe(0);
    link.close();
  });

  it("keeps records another 4xx answers (a wrong address, a 408): nothing says they would be refused again", async () => {
    for (const status of [404, 408]) {
      const { link, spool } = linkAnswering(() => json(status, envelope(status, "NOT_FOUND")));
      expect(
        await link.reportNow([{ event_id: "e", task_id: "t", invocation_id: "i", tool: "x", phase: "outcome" }]),
      ).toBe(false);
      await link.flush();
      expect(spool.pending()).toBe(1);
      expect(spool.deadLettered()).toBe(0);
      link.close();
    }
  });

  it("cuts an envelope larger than Settle takes before it is reported, marked, keeping isError", () => {
    const huge = {
      content: [{ type: "text", text: "r".repeat(3_000_000) }],
      isError: false,
      structuredContent: { order_id: "ord-1", rows: Array.from({ length: 50_000 }, (_, i) => ({ i })) },
    };
    const record = attemptRecord(ref, "outcome", huge, new Date());
    const bytes = Buffer.byteLength(JSON.stringify(record));
    expect(bytes).toBeLessThan(1024 * 1024 - 1024);
    const env = record.envelope as Record<string, any>;
    expect(env.isError).toBe(false);
    expect(env[TRUNCATED_KEY].original_bytes).toBeGreaterThan(3_000_000);
    expect(env.structuredContent.order_id).toBe("ord-1");
    expect(Array.isArray(env.content) && env.content[0].type === "text").toBe(true);
    const small = { content: [{ type: "text", text: "ok" }] };
    expect(attemptRecord(ref, "outcome", small, new Date()).envelope).toEqual(small);
  });
});
