import http from "node:http";
import fc from "fast-check";
import { expect, test } from "@playwright/test";
import { createSettleClient, SettleError } from "@settle/client";
import { badRecord, goodRecord } from "../tests/integration/fuzz-inputs";
import { earlyThenOrdinary, record, viaAgent, viaFetch } from "./keep-alive";
import { readState, startThroughNext } from "./server";

// An answer sent before its request's body was read to the end (a 413, a 401 to a key-less POST, a 415)
// says `Connection: close` and closes its connection; an answer after the whole body keeps it. A client
// that pools connections — node's fetch (undici), http.Agent with keepAlive, @settle/client — then sends
// its next request on a connection that can carry it, and never loses it to a reset. Both serving paths
// of `npm start`: the fast lane, and Next.js's handler (SETTLE_FAST_LANE=off).

const state = readState().console;
const ROUNDS = 200;
const auth = { authorization: `Bearer ${state.key}`, "content-type": "application/json" };
const big = "x".repeat(72_000);
const rounds = (send: Parameters<typeof earlyThenOrdinary>[0], side: string) =>
  earlyThenOrdinary(send, { key: state.key, rounds: ROUNDS, side, closes: true });

let next: Awaited<ReturnType<typeof startThroughNext>>;
test.beforeAll(async () => {
  test.setTimeout(90_000);
  next = await startThroughNext(state.databaseUrl);
});
test.afterAll(() => next?.stop());

const sides = () => [
  { side: "lane", baseURL: state.baseURL },
  { side: "next", baseURL: next.baseURL },
];

test.describe.configure({ timeout: 120_000 });

test("node's fetch (undici's pool): every request after an early answer is answered, on both serving paths", async () => {
  for (const { side, baseURL } of sides()) await rounds(viaFetch(baseURL), `fetch-${side}`);
});

test("http.Agent with keepAlive: early answers close, ordinary answers keep their connection, on both paths", async () => {
  for (const { side, baseURL } of sides()) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    agent.on("free", (socket) => sockets.add(socket));
    try {
      const normals = await rounds(viaAgent(agent, baseURL), `agent-${side}`);
      // Each early answer closed its socket, so each ordinary request went out on a new one, which the
      // next early request then reused (the ordinary answer kept it open).
      expect(normals.every((a) => a.reused === false)).toBe(true);
      expect(sockets.size).toBe(ROUNDS);
    } finally {
      agent.destroy();
    }
  }
});

test("@settle/client: a refused guard, then a report that is answered once, never resent, on both paths", async () => {
  for (const { side, baseURL } of sides()) {
    let sent = 0;
    const client = createSettleClient({
      url: baseURL,
      key: state.key,
      maxRetries: 0,
      batchDelayMs: 0,
      fetch: (input, init) => {
        sent += 1;
        return fetch(input, init);
      },
    });
    for (let n = 0; n < ROUNDS; n += 1) {
      const refused = await client
        .guard({ task_id: "t", tool: "charge_card", idempotency_key: "k", envelope: big } as never)
        .catch((error: unknown) => error);
      expect(refused instanceof SettleError && refused.status, `round ${n}`).toBe(413);
      const before = sent;
      const result = await client.report(record(`client-${side}`, n));
      expect(result, `round ${n}`).toMatchObject({ status: "accepted", resent: false });
      expect(sent - before, `round ${n}: sent once`).toBe(1);
    }
  }
});

// The fuzz suite's shape over the wire: hostile requests (answered early or not) and batches of records
// (good ones among bad ones), sent side by side through ONE keep-alive pool as a real runtime's client
// does. Every request gets an answer, under 500 and in Settle's envelope when it fails, and every good
// record in a batch is stored.
const hostile = fc.record({
  path: fc.constantFrom("/api/v1/envelopes", "/api/v1/guard", "/v1/traces", "/api/v1/verifications"),
  key: fc.constantFrom(state.key, null, "stl_rk_aaaaaaaa_" + "b".repeat(32), "nope"),
  type: fc.constantFrom("application/json", "text/plain", "application/x-ndjson", "application/x-protobuf"),
  size: fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 60_000, max: 1_200_000 })),
});
const batch = fc.array(fc.oneof({ weight: 3, arbitrary: goodRecord }, { weight: 1, arbitrary: badRecord }), {
  minLength: 1,
  maxLength: 8,
});
const request = fc.oneof(
  hostile.map((h) => ({ kind: "hostile" as const, ...h })),
  batch.map((records) => ({ kind: "batch" as const, records })),
);

test("fuzz: hostile requests and batches side by side through one shared keep-alive pool, every one answered", async () => {
  test.setTimeout(180_000);
  for (const { side, baseURL } of sides()) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const send = viaAgent(agent, baseURL);
    let answered = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(request, { minLength: 4, maxLength: 12 }), async (requests) => {
          await Promise.all(
            requests.map(async (r) => {
              if (r.kind === "hostile") {
                const headers: Record<string, string> = { "content-type": r.type };
                if (r.key) headers.authorization = `Bearer ${r.key}`;
                const body = Buffer.alloc(r.size, 0x7b);
                const answer = await send(r.path, headers, body).catch((error: unknown) => {
                  throw new Error(`${side}: no answer to ${r.path} (${r.size} bytes): ${String(error)}`);
                });
                expect(answer.status, `${side} ${r.path}`).toBeLessThan(500);
                if (answer.status >= 400) expect(answer.body?.ok, `${side} ${r.path}: envelope`).toBe(false);
              } else {
                const body = JSON.stringify({ records: r.records.map((x) => ({ ...(x as object), good: undefined })) });
                const answer = await send("/api/v1/envelopes", auth, body).catch((error: unknown) => {
                  throw new Error(`${side}: a batch of ${r.records.length} records got no answer: ${String(error)}`);
                });
                expect(answer.status, `${side} batch`).toBe(207);
                r.records.forEach((x, i) => {
                  if ((x as { good?: boolean }).good)
                    expect(answer.body.results[i].status, JSON.stringify(answer.body.results[i])).not.toBe("rejected");
                });
              }
              answered += 1;
            }),
          );
        }),
        // The first failure is the finding: shrinking would resend it for minutes.
        { numRuns: 40, endOnFailure: true },
      );
    } finally {
      agent.destroy();
    }
    expect(answered).toBeGreaterThanOrEqual(40 * 4);
  }
});
