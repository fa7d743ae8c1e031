import http from "node:http";
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { expect, test } from "@playwright/test";
import { createSettleClient, SettleError } from "@settle/client";
import { badRecord, goodRecord } from "../tests/integration/fuzz-inputs";
import { readState, startThroughNext } from "./server";

// An answer sent before its request's body was read to the end (a 413, a 401 to a key-less POST, a 415)
// says `Connection: close` and closes its connection; an answer after the whole body keeps it. A client
// that pools connections — node's fetch (undici), http.Agent with keepAlive, @settle/client — then sends
// its next request on a connection that can carry it, and never loses it to a reset. Both serving paths
// of `npm start`: the fast lane, and Next.js's handler (SETTLE_FAST_LANE=off).

const state = readState().console;
const run = randomBytes(4).toString("hex");
const ROUNDS = 200;

type Shape = {
  label: string;
  path: string;
  headers: Record<string, string>;
  body: () => string | Buffer;
  status: number;
};
const auth = { authorization: `Bearer ${state.key}`, "content-type": "application/json" };
const big = "x".repeat(72_000);
/** Requests answered before their body is read: by Content-Length, before authentication, by content type. */
const EARLY: Shape[] = [
  {
    label: "guard over 64 KiB",
    path: "/api/v1/guard",
    headers: auth,
    body: () => JSON.stringify({ task_id: "t", tool: "charge_card", idempotency_key: "k", envelope: big }),
    status: 413,
  },
  {
    label: "ingest over 1 MiB",
    path: "/api/v1/envelopes",
    headers: auth,
    body: () => JSON.stringify({ records: [{ pad: "y".repeat(1_100_000) }] }),
    status: 413,
  },
  {
    label: "ingest without a key",
    path: "/api/v1/envelopes",
    headers: { "content-type": "application/json" },
    body: () => JSON.stringify({ pad: big }),
    status: 401,
  },
  {
    label: "ingest as text/plain",
    path: "/api/v1/envelopes",
    headers: { ...auth, "content-type": "text/plain" },
    body: () => big,
    status: 415,
  },
  {
    label: "guard without a key",
    path: "/api/v1/guard",
    headers: { "content-type": "application/json" },
    body: () => JSON.stringify({ pad: big }),
    status: 401,
  },
];

const record = (side: string, n: number) => ({
  event_id: `ea-${run}-${side}-${n}`,
  task_id: `ea-${run}-${side}`,
  invocation_id: `ea-${run}-${side}-${n}`,
  tool: "lookup_price",
  effect_class: "read",
  envelope: { outcome: "ok" },
});

type Answer = { status: number; connection: string | null; body: any; reused?: boolean };

async function viaFetch(baseURL: string, path: string, headers: Record<string, string>, body: string | Buffer) {
  const res = await fetch(`${baseURL}${path}`, { method: "POST", headers, body: new Uint8Array(Buffer.from(body)) });
  const text = await res.text();
  return { status: res.status, connection: res.headers.get("connection"), body: text ? JSON.parse(text) : null };
}

function viaAgent(agent: http.Agent, baseURL: string) {
  const url = new URL(baseURL);
  return (path: string, headers: Record<string, string>, body: string | Buffer): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path, method: "POST", headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection ?? null,
            body: text ? JSON.parse(text) : null,
            reused: req.reusedSocket,
          });
        });
      });
      req.on("error", reject);
      req.setTimeout(15_000, () => req.destroy(new Error("no answer within 15 s")));
      req.end(body);
    });
}

type Send = (path: string, headers: Record<string, string>, body: string | Buffer) => Promise<Answer>;

/** ROUNDS of an early-answered request, then an ordinary ingest on the same pool, at once. */
async function rounds(send: Send, side: string): Promise<Answer[]> {
  const normals: Answer[] = [];
  for (let n = 0; n < ROUNDS; n += 1) {
    const shape = EARLY[n % EARLY.length]!;
    const early = await send(shape.path, shape.headers, shape.body());
    expect(early.status, `round ${n}: ${shape.label}`).toBe(shape.status);
    expect(early.body?.ok, `round ${n}: Settle's envelope`).toBe(false);
    expect(early.connection, `round ${n}: ${shape.label} closes its connection`).toBe("close");
    let normal: Answer;
    try {
      normal = await send("/api/v1/envelopes", auth, JSON.stringify(record(side, n)));
    } catch (error) {
      throw new Error(`round ${n}: the request after "${shape.label}" got no answer: ${String(error)}`);
    }
    expect(normal.status, `round ${n}`).toBe(207);
    expect(normal.body.results[0].status, `round ${n}`).toBe("accepted");
    expect(normal.connection, `round ${n}: an answer after the whole body keeps its connection`).toBe("keep-alive");
    normals.push(normal);
  }
  return normals;
}

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
  for (const { side, baseURL } of sides()) await rounds((p, h, b) => viaFetch(baseURL, p, h, b), `fetch-${side}`);
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
