import { describe, expect, it } from "vitest";
import { createSettleClient, SettleError, type ServeEvent, type VerificationItem } from "../src/index.js";
import type { FetchLike } from "../src/http.js";

// The worker loop against a stand-in for Settle's two verification endpoints: asks are handed out once
// (leased), answers recorded; faults and refusals can be queued per endpoint.

const item = (n: number, tool = "create_refund"): VerificationItem => ({
  id: `00000000-0000-4000-8000-00000000000${n}`,
  invocation_id: `inv-${n}`,
  task_id: "t1",
  tool,
  effect_class: "money",
  idempotency_key: `key-${n}`,
  arguments: { amount: n },
  first_dispatched_at: "2026-12-04T00:00:00.000Z",
  try: 1,
  max_tries: 3,
  lease_expires_at: "2026-12-04T00:10:00.000Z",
});

function fakeSettle(asks: VerificationItem[]) {
  const queue = [...asks];
  const answers: Array<{ id: string; body: { found: boolean | null; evidence: string | null; ref: string | null } }> =
    [];
  const polls: string[] = [];
  const batches: number[] = [];
  const pollFaults: number[] = [];
  const answerRefusals = new Map<string, number>();
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    if (init?.method === "GET" && url.pathname === "/api/v1/verifications") {
      polls.push(url.search);
      const fault = pollFaults.shift();
      if (fault) return new Response("down", { status: fault });
      const limit = Number(url.searchParams.get("limit"));
      if (queue.length === 0) {
        // A long poll with nothing to hand out: hold a little, unless the worker goes away.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 20);
          init.signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (init.signal?.aborted) throw new DOMException("aborted", "AbortError");
      }
      return Response.json({ items: queue.splice(0, limit) });
    }
    const refusal = (id: string, status: number) => ({
      id,
      error: { code: status === 409 ? "VERIFICATION_CLOSED" : "NOT_FOUND", message: "closed" },
    });
    const answer = (id: string, body: (typeof answers)[number]["body"]) => {
      answers.push({ id, body });
      return { id, invocation_id: "x", state: "settled", reading: "found", next_ask_at: null };
    };
    const body = JSON.parse(String(init?.body));
    if (url.pathname === "/api/v1/verifications") {
      batches.push(body.answers.length);
      const results = body.answers.map(({ id, ...finding }: { id: string } & (typeof answers)[number]["body"]) => {
        const refused = answerRefusals.get(id);
        return refused ? refusal(id, refused) : answer(id, finding);
      });
      return Response.json({ results });
    }
    const id = url.pathname.split("/").at(-1)!;
    const refused = answerRefusals.get(id);
    if (refused) {
      return Response.json(
        {
          ok: false,
          code: refused === 409 ? "VERIFICATION_CLOSED" : "NOT_FOUND",
          category: "conflict",
          commit_state: "not_committed",
          retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
          agent_message: "closed",
        },
        { status: refused },
      );
    }
    return Response.json(answer(id, body));
  };
  return { fetch, answers, batches, polls, pollFaults, answerRefusals, queue };
}

function setup(asks: VerificationItem[]) {
  const settle = fakeSettle(asks);
  const client = createSettleClient({
    url: "http://settle.test",
    key: "stl_rk_x",
    fetch: settle.fetch,
    sleep: async () => {},
  });
  const events: ServeEvent[] = [];
  const controller = new AbortController();
  /** Serves until every ask is answered or refused, then stops. */
  const serveUntil = async (done: () => boolean, options: { timeoutMs?: number } = {}) => {
    const served = client.serveVerifications({
      signal: controller.signal,
      waitS: 1,
      worker: "w1",
      timeoutMs: options.timeoutMs ?? 1_000,
      log: (e) => {
        events.push(e);
        if (done()) controller.abort();
      },
    });
    await served;
  };
  return { settle, client, events, controller, serveUntil };
}

describe("serveVerifications", () => {
  it("answers each ask with the most specific verifier's finding, and says who it is", async () => {
    const { settle, client, serveUntil } = setup([item(1), item(2, "send_email"), item(3, "create_invoice")]);
    client.verifier("create_*", () => ({ found: false, evidence: "no invoice" }));
    client.verifier("create_refund", async (i) => ({
      found: true,
      evidence: `refund for ${i.idempotency_key}`,
      ref: "re_1",
    }));
    client.verifier("send_*", () => ({ found: null }));
    await serveUntil(() => settle.answers.length === 3);
    const byId = Object.fromEntries(settle.answers.map((a) => [a.id.at(-1), a.body]));
    expect(byId).toEqual({
      "1": { found: true, evidence: "refund for key-1", ref: "re_1" },
      "2": { found: null, evidence: null, ref: null },
      "3": { found: false, evidence: "no invoice", ref: null },
    });
    expect(settle.polls[0]).toContain("worker=w1");
    expect(settle.polls[0]).toContain("wait=1");
  });

  it("a verifier that throws, hangs or is missing answers “could not tell” with the reason, and the loop goes on", async () => {
    const { settle, client, serveUntil } = setup([item(1), item(2, "get_thing"), item(3, "create_hang")]);
    client.verifier("create_refund", () => {
      throw new Error("refunds API answered 503");
    });
    client.verifier("create_hang", () => new Promise(() => {}));
    await serveUntil(() => settle.answers.length === 3, { timeoutMs: 50 });
    const evidence = Object.fromEntries(settle.answers.map((a) => [a.id.at(-1), [a.body.found, a.body.evidence]]));
    expect(evidence).toEqual({
      "1": [null, "the verifier failed: refunds API answered 503"],
      "2": [null, "no verifier registered for get_thing in this worker"],
      "3": [null, "the verifier took longer than 50 ms"],
    });
  });

  it("sends findings that finish together in one request, and does not hold them for a slow verifier", async () => {
    const asks = [1, 2, 3, 4, 5].map((n) => item(n));
    const { settle, client, events, serveUntil } = setup(asks);
    client.verifier("create_refund", async (ask) => {
      if (ask.id === item(5).id) await new Promise((r) => setTimeout(r, 200));
      return { found: true, evidence: `seen ${ask.idempotency_key}` };
    });
    const answeredAt: Record<string, number> = {};
    const started = Date.now();
    await serveUntil(() => {
      for (const e of events) if (e.kind === "answered") answeredAt[e.item.id.at(-1)!] ??= Date.now() - started;
      return settle.answers.length === 5;
    });
    expect(settle.batches).toEqual([4, 1]);
    expect(answeredAt["1"]).toBeLessThan(150);
    expect(answeredAt["5"]).toBeGreaterThanOrEqual(190);
    expect(settle.answers.find((a) => a.id === item(3).id)?.body).toEqual({
      found: true,
      evidence: "seen key-3",
      ref: null,
    });
  });

  it("clips evidence to 4 KiB", async () => {
    const { settle, client, serveUntil } = setup([item(1)]);
    client.verifier("create_refund", () => ({ found: true, evidence: "x".repeat(10_000) }));
    await serveUntil(() => settle.answers.length === 1);
    expect(settle.answers[0]!.body.evidence).toHaveLength(4096);
  });

  it("an answer Settle refuses as closed (a person settled it) is reported and skipped", async () => {
    const { settle, client, events, serveUntil } = setup([item(1), item(2)]);
    settle.answerRefusals.set(item(1).id, 409);
    client.verifier("create_refund", () => ({ found: true }));
    await serveUntil(() => events.length === 2);
    const refused = events.find((e) => e.kind === "answer_refused");
    expect(refused?.kind === "answer_refused" && refused.error.code).toBe("VERIFICATION_CLOSED");
    expect(settle.answers.map((a) => a.id)).toEqual([item(2).id]);
  });

  it("backs off when Settle is unreachable, then goes on; a refused key stops the loop with the error", async () => {
    const { settle, client, events, serveUntil } = setup([item(1)]);
    settle.pollFaults.push(503, 503, 503, 503, 503, 503, 503);
    client.verifier("create_refund", () => ({ found: true }));
    await serveUntil(() => settle.answers.length === 1);
    const failed = events.filter((e) => e.kind === "poll_failed");
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(settle.answers).toHaveLength(1);

    const other = setup([]);
    other.settle.pollFaults.push(401);
    await expect(other.client.serveVerifications({ waitS: 0, log: () => {} })).rejects.toBeInstanceOf(SettleError);
  });

  it("asks for at most 20 at a time, and stops on a request Settle refuses as malformed", async () => {
    const { settle, client } = setup([item(1)]);
    client.verifier("create_refund", () => ({ found: true }));
    const controller = new AbortController();
    await client.serveVerifications({
      signal: controller.signal,
      concurrency: 40,
      waitS: 0,
      log: (e) => {
        if (e.kind === "answered") controller.abort();
      },
    });
    expect(new URLSearchParams(settle.polls[0]).get("limit")).toBe("20");

    const other = setup([]);
    other.settle.pollFaults.push(400);
    await expect(other.client.serveVerifications({ waitS: 0, log: () => {} })).rejects.toMatchObject({ status: 400 });
  });

  it("stops promptly when its signal aborts mid long poll", async () => {
    const { client } = setup([]);
    const controller = new AbortController();
    const started = Date.now();
    const served = client.serveVerifications({ signal: controller.signal, waitS: 30, log: () => {} });
    setTimeout(() => controller.abort(), 50);
    await served;
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
