import http from "node:http";
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { readState, startThroughNext } from "./server";

// The fast lane (docs/decisions/024-fast-lane.md) must answer exactly as the
// Next.js route does. The same requests go to `npm start` as shipped (the
// console server: guard, ingest and decision in the fast lane) and to a server
// of the same build on the same database with SETTLE_FAST_LANE=off (every
// request through Next.js); status, headers and body must be the same, errors
// included. A request that writes is sent to each with ids of its own (a tag),
// which the comparison reads as one.

const state = readState().console;
const run = randomBytes(4).toString("hex");
const TAGS = { lane: `fla${run}`, next: `flb${run}` } as const;
type Side = keyof typeof TAGS;

type Sent = { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer };
type Answer = { status: number; headers: Record<string, string | string[]>; body: string };

// Framing and the clock, not the answer: how the bytes travel may differ. And which way in served it
// (x-settle-served-by, checked on its own below).
const FRAMING = new Set([
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "x-settle-served-by",
]);

function send(baseURL: string, req: Sent): Promise<Answer> {
  const url = new URL(baseURL);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: req.headers ?? {},
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => {
          const headers: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(res.headers))
            if (value !== undefined && !FRAMING.has(name)) headers[name] = value;
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString("utf8") });
        });
      },
    );
    r.on("error", reject);
    r.end(req.body);
  });
}

const json = (key: string | null, extra: Record<string, string> = {}): Record<string, string> => ({
  "content-type": "application/json",
  ...(key ? { authorization: `Bearer ${key}` } : {}),
  ...extra,
});

/** JSON nested 10,000 deep: refused before anything walks it (recursion that deep overflows the stack). */
const deep = `${"[".repeat(10_000)}1${"]".repeat(10_000)}`;

/** Each case: the request for a side (its tag in the ids of what it writes). */
const cases: Array<[string, (tag: string) => Sent]> = [
  ["guard: no key", () => ({ method: "POST", path: "/api/v1/guard", headers: json(null), body: "{}" })],
  [
    "guard: a key Settle never issued",
    () => ({ method: "POST", path: "/api/v1/guard", headers: json(`stl_rk_aaaaaaaa_${"b".repeat(32)}`), body: "{}" }),
  ],
  ["guard: not a Settle key", () => ({ method: "POST", path: "/api/v1/guard", headers: json("nope"), body: "{}" })],
  [
    "guard: text/plain",
    () => ({
      method: "POST",
      path: "/api/v1/guard",
      headers: { ...json(state.key), "content-type": "text/plain" },
      body: "hi",
    }),
  ],
  ["guard: invalid JSON", () => ({ method: "POST", path: "/api/v1/guard", headers: json(state.key), body: "{nope" })],
  [
    "guard: a field missing",
    () => ({
      method: "POST",
      path: "/api/v1/guard",
      headers: json(state.key),
      body: JSON.stringify({ task_id: "t", idempotency_key: "k" }),
    }),
  ],
  [
    "guard: over 64 KiB",
    () => ({
      method: "POST",
      path: "/api/v1/guard",
      headers: json(state.key),
      body: JSON.stringify({ task_id: "t", tool: "x", idempotency_key: "k", envelope: "x".repeat(70_000) }),
    }),
  ],
  [
    "guard: allowed",
    (tag) => ({
      method: "POST",
      path: "/api/v1/guard?ignored=1",
      headers: json(state.key),
      body: JSON.stringify({
        task_id: `t-${tag}`,
        tool: "charge_card",
        idempotency_key: `k1-${tag}`,
        effect_class: "money",
        envelope: { args: { amount: 5, note: "café \u0000 ok" } },
      }),
    }),
  ],
  [
    "guard: an invocation named with another key",
    (tag) => ({
      method: "POST",
      path: "/api/v1/guard",
      headers: json(state.key),
      body: JSON.stringify({
        task_id: `t-${tag}`,
        invocation_id: `t-${tag}:k1-${tag}`,
        tool: "charge_card",
        idempotency_key: `other-${tag}`,
      }),
    }),
  ],
  [
    "guard: the same again is in flight",
    (tag) => ({
      method: "POST",
      path: "/api/v1/guard",
      headers: json(state.key),
      body: JSON.stringify({ task_id: `t-${tag}`, tool: "charge_card", idempotency_key: `k1-${tag}` }),
    }),
  ],
  [
    "guard: X-Forwarded-Proto https (not https to Next.js either)",
    (tag) => ({
      method: "POST",
      path: "/api/v1/guard",
      headers: json(state.key, { "x-forwarded-proto": "https" }),
      body: JSON.stringify({ task_id: `t-${tag}`, tool: "send_email", idempotency_key: `k2-${tag}` }),
    }),
  ],
  ["guard: PUT is not served", () => ({ method: "PUT", path: "/api/v1/guard", headers: json(state.key), body: "{}" })],
  ["guard: a trailing slash", () => ({ method: "POST", path: "/api/v1/guard/", headers: json(state.key), body: "{}" })],
  [
    "ingest: one record",
    (tag) => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: json(state.key),
      body: JSON.stringify({
        event_id: `e1-${tag}`,
        task_id: `t-${tag}`,
        invocation_id: `t-${tag}:k1-${tag}`,
        attempt: 1,
        tool: "charge_card",
        at: "2026-11-20T10:00:00Z",
        envelope: { ok: false, code: "TIMEOUT", commit_state: "unknown" },
      }),
    }),
  ],
  [
    "ingest: the same record again",
    (tag) => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: json(state.key),
      body: JSON.stringify({
        event_id: `e1-${tag}`,
        task_id: `t-${tag}`,
        invocation_id: `t-${tag}:k1-${tag}`,
        attempt: 1,
        tool: "charge_card",
        at: "2026-11-20T10:00:00Z",
        envelope: { ok: false, code: "TIMEOUT", commit_state: "unknown" },
      }),
    }),
  ],
  [
    "ingest: a batch with a bad record",
    (tag) => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: json(state.key),
      body: JSON.stringify({
        records: [
          {
            event_id: `e2-${tag}`,
            task_id: `t-${tag}`,
            tool: "send_email",
            at: "2026-11-20T10:00:01Z",
            envelope: { title: "x", status: 503, retry_after: 1e13 },
          },
          { event_id: `e3-${tag}`, task_id: "", tool: "x" },
          { nope: true },
        ],
      }),
    }),
  ],
  [
    "ingest: NDJSON with a line that is not JSON",
    (tag) => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: { ...json(state.key), "content-type": "application/x-ndjson" },
      body: `${JSON.stringify({ event_id: `e4-${tag}`, task_id: `t-${tag}`, tool: "get_order", at: "2026-11-20T10:00:02Z", envelope: { ok: true } })}\n{broken\n`,
    }),
  ],
  [
    "ingest: no records",
    () => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: json(state.key),
      body: JSON.stringify({ records: [] }),
    }),
  ],
  [
    "ingest: too many records",
    () => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: json(state.key),
      body: JSON.stringify({ records: Array.from({ length: 501 }, () => ({})) }),
    }),
  ],
  [
    "ingest: a form body",
    () => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: { ...json(state.key), "content-type": "application/x-www-form-urlencoded" },
      body: "a=1",
    }),
  ],
  [
    "ingest: over 1 MiB (declared)",
    () => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: { ...json(state.key), "content-length": String(2 * 1024 * 1024) },
      body: "",
    }),
  ],
  ["ingest: no key", () => ({ method: "POST", path: "/api/v1/envelopes", headers: json(null), body: "{}" })],
  [
    "guard: nested 10,000 deep",
    () => ({
      method: "POST",
      path: "/api/v1/guard",
      headers: json(state.key),
      body: `{"task_id":"t","tool":${deep},"idempotency_key":"k"}`,
    }),
  ],
  [
    "ingest: a record nested 10,000 deep beside a good one",
    (tag) => ({
      method: "POST",
      path: "/api/v1/envelopes",
      headers: json(state.key),
      body: `{"records":[{"task_id":"t-${tag}","invocation_id":"d-${tag}","tool":"x","extra":${deep}},{"event_id":"e5-${tag}","task_id":"t-${tag}","tool":"x","invocation_id":"d-${tag}"}]}`,
    }),
  ],
  [
    "otlp: one tool span and a chat span, JSON",
    (tag) => ({ method: "POST", path: "/v1/traces", headers: json(state.key), body: otlpBody(tag) }),
  ],
  [
    "otlp: the same spans again, under /api/v1/otlp",
    (tag) => ({ method: "POST", path: "/api/v1/otlp/v1/traces", headers: json(state.key), body: otlpBody(tag) }),
  ],
  [
    "otlp: JSON that does not parse",
    () => ({ method: "POST", path: "/v1/traces", headers: json(state.key), body: '{"resourceSpans": [' }),
  ],
  [
    "otlp: protobuf that does not decode",
    () => ({
      method: "POST",
      path: "/v1/traces",
      headers: { ...json(state.key), "content-type": "application/x-protobuf" },
      body: "\u00ff\u00ff\u00ff not protobuf",
    }),
  ],
  [
    "otlp: gzip that is not gzip",
    () => ({
      method: "POST",
      path: "/v1/traces",
      headers: { ...json(state.key), "content-encoding": "gzip" },
      body: "{}",
    }),
  ],
  ["otlp: no key", () => ({ method: "POST", path: "/v1/traces", headers: json(null), body: "{}" })],
  [
    "decision: not this runtime's / none",
    () => ({ method: "GET", path: "/api/v1/invocations/no-such-invocation/decision", headers: json(state.key) }),
  ],
  [
    "decision: an encoded id",
    () => ({ method: "GET", path: "/api/v1/invocations/a%20b%2Fc%C3%A9/decision", headers: json(state.key) }),
  ],
  [
    "decision: an id with NUL",
    () => ({ method: "GET", path: "/api/v1/invocations/a%00b/decision", headers: json(state.key) }),
  ],
  [
    "decision: an id that does not decode",
    () => ({ method: "GET", path: "/api/v1/invocations/x%ZZ/decision", headers: json(state.key) }),
  ],
  [
    "decision: a bad wait",
    () => ({ method: "GET", path: "/api/v1/invocations/x/decision?wait=soon", headers: json(state.key) }),
  ],
  ["decision: no key", () => ({ method: "GET", path: "/api/v1/invocations/x/decision" })],
  ["decision: HEAD", () => ({ method: "HEAD", path: "/api/v1/invocations/x/decision", headers: json(state.key) })],
];

/** An OTLP/JSON export as the SDK's exporter sends it: one execute_tool span that failed, one chat span. */
function otlpBody(tag: string): string {
  const hex = (n: number) => Buffer.from(tag).toString("hex").padEnd(n, "0").slice(0, n);
  const span = (
    name: string,
    spanId: string,
    attributes: Record<string, string>,
    status: { code: number; message?: string },
  ) => ({
    traceId: hex(32),
    spanId,
    name,
    kind: 1,
    startTimeUnixNano: "1763632800000000000",
    endTimeUnixNano: "1763632801000000000",
    attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })),
    status,
  });
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "lane-agent" } }] },
        scopeSpans: [
          {
            spans: [
              span(
                "execute_tool charge_card",
                "00000000000000a1",
                {
                  "gen_ai.operation.name": "execute_tool",
                  "gen_ai.tool.name": "charge_card",
                  "gen_ai.tool.call.id": `call-${tag}`,
                },
                { code: 2, message: "timed out" },
              ),
              span("chat gpt-4o", "00000000000000a2", { "gen_ai.operation.name": "chat" }, { code: 0 }),
            ],
          },
        ],
      },
    ],
  });
}

const normalize = (a: Answer, tag: string): Answer => {
  const swap = (s: string) => s.split(tag).join("TAG");
  const headers = Object.fromEntries(
    Object.entries(a.headers).map(([k, v]) => [k, Array.isArray(v) ? v.map(swap) : swap(v)]),
  );
  return { status: a.status, headers, body: swap(a.body) };
};

let next: Awaited<ReturnType<typeof startThroughNext>>;
test.beforeAll(async () => {
  test.setTimeout(90_000);
  next = await startThroughNext(state.databaseUrl);
});
test.afterAll(() => next?.stop());

const bases = (): Record<Side, string> => ({ lane: state.baseURL, next: next.baseURL });

test("the fast lane answers every hot-route request exactly as the Next.js route does, errors included", async () => {
  test.setTimeout(60_000);
  for (const [name, make] of cases) {
    const answers = {} as Record<Side, Answer>;
    for (const side of ["lane", "next"] as const) {
      const req = make(TAGS[side]);
      answers[side] = normalize(
        await send(bases()[side], {
          ...req,
          headers: { ...req.headers, "x-request-id": `req-${name.replace(/\W+/g, "-")}` },
        }),
        TAGS[side],
      );
    }
    expect(answers.lane, name).toEqual(answers.next);
  }
});

test("an answer without a request id of the caller's gets a fresh one on both", async () => {
  const req = cases[0]![1]("x");
  const [lane, viaNext] = [await send(bases().lane, req), await send(bases().next, req)];
  expect(lane.headers["x-request-id"]).toMatch(/^req_[\w-]{12}$/);
  expect(viaNext.headers["x-request-id"]).toMatch(/^req_[\w-]{12}$/);
  const strip = (a: Answer) => ({
    ...a,
    headers: { ...a.headers, "x-request-id": "" },
    body: a.body.replace(/req_[\w-]{12}/g, ""),
  });
  expect(strip(lane)).toEqual(strip(viaNext));
});

test("a decision read, its ETag, a 304 and a short wait are the same on both", async () => {
  const id = `t-dec${run}:k`;
  const ingest = await send(bases().lane, {
    method: "POST",
    path: "/api/v1/envelopes",
    headers: json(state.key),
    body: JSON.stringify({
      event_id: `dec-${run}`,
      task_id: `t-dec${run}`,
      invocation_id: id,
      attempt: 1,
      tool: "charge_card",
      at: "2026-11-20T10:00:00Z",
      envelope: { ok: false, code: "TIMEOUT", commit_state: "unknown" },
    }),
  });
  expect(ingest.status).toBe(207);
  const path = `/api/v1/invocations/${encodeURIComponent(id)}/decision`;
  const read = async (headers: Record<string, string>, query = "") => {
    const [a, b] = [
      await send(bases().lane, { method: "GET", path: path + query, headers }),
      await send(bases().next, { method: "GET", path: path + query, headers }),
    ];
    expect(a).toEqual(b);
    return a;
  };
  const first = await read({ authorization: `Bearer ${state.key}`, "x-request-id": "req-dec-1" });
  expect(first.status).toBe(200);
  const etag = String(first.headers.etag);
  expect(
    (await read({ authorization: `Bearer ${state.key}`, "x-request-id": "req-dec-2", "if-none-match": etag })).status,
  ).toBe(304);
  expect(
    (
      await read(
        { authorization: `Bearer ${state.key}`, "x-request-id": "req-dec-3", "if-none-match": etag },
        "?wait=1",
      )
    ).status,
  ).toBe(304);
});

/**
 * Sends headers, then a byte every 100 ms that never ends, and resolves with the first answer and how
 * long it took; null when none came within `giveUpMs`.
 */
function trickle(baseURL: string, req: Sent, giveUpMs = 5_000): Promise<(Answer & { ms: number }) | null> {
  const url = new URL(baseURL);
  return new Promise((resolve) => {
    const started = Date.now();
    const r = http.request({
      host: url.hostname,
      port: url.port,
      method: req.method,
      path: req.path,
      headers: { ...req.headers, "transfer-encoding": "chunked" },
      agent: false,
    });
    const drip = setInterval(() => r.write("{"), 100);
    const finish = (answer: (Answer & { ms: number }) | null) => {
      clearInterval(drip);
      clearTimeout(giveUp);
      r.destroy();
      resolve(answer);
    };
    const giveUp = setTimeout(() => finish(null), giveUpMs);
    r.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => {
        const headers: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined && !FRAMING.has(name)) headers[name] = value;
        finish({
          status: res.statusCode ?? 0,
          headers,
          body: Buffer.concat(chunks).toString("utf8"),
          ms: Date.now() - started,
        });
      });
    });
    r.on("error", () => finish(null));
    r.write("{");
  });
}

test("a request without a valid key is answered 401 before its body arrives, through the lane as through Next.js", async () => {
  test.setTimeout(60_000);
  const foreign = `stl_rk_aaaaaaaa_${"b".repeat(32)}`;
  const trickled: Array<[string, Sent]> = [
    [
      "guard, no key",
      { method: "POST", path: "/api/v1/guard", headers: json(null, { "x-request-id": "req-trickle-1" }) },
    ],
    [
      "ingest, no key",
      { method: "POST", path: "/api/v1/envelopes", headers: json(null, { "x-request-id": "req-trickle-2" }) },
    ],
    [
      "ingest, a key Settle never issued",
      { method: "POST", path: "/api/v1/envelopes", headers: json(foreign, { "x-request-id": "req-trickle-3" }) },
    ],
    [
      "otlp, no key",
      {
        method: "POST",
        path: "/v1/traces",
        headers: { "content-type": "application/x-protobuf", "x-request-id": "req-trickle-4" },
      },
    ],
    [
      "otlp under /api, not a Settle key",
      { method: "POST", path: "/api/v1/otlp/v1/traces", headers: json("nope", { "x-request-id": "req-trickle-5" }) },
    ],
  ];
  for (const [name, req] of trickled) {
    const [lane, viaNext] = [await trickle(bases().lane, req), await trickle(bases().next, req)];
    expect(lane, `${name}: the lane did not answer while the body trickled`).not.toBeNull();
    expect(viaNext, `${name}: Next.js did not answer while the body trickled`).not.toBeNull();
    expect(lane!.status, name).toBe(401);
    expect(lane!.ms, `${name}: the lane took ${lane!.ms} ms`).toBeLessThan(1_000);
    expect(viaNext!.ms, `${name}: Next.js took ${viaNext!.ms} ms`).toBeLessThan(1_000);
    const { ms: _a, ...laneAnswer } = lane!;
    const { ms: _b, ...nextAnswer } = viaNext!;
    expect(laneAnswer, name).toEqual(nextAnswer);
  }
});

/** Which way in answered a request on `baseURL`: the lane's marker, or null. */
async function servedBy(
  baseURL: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<string | null> {
  const res = await fetch(`${baseURL}${path}`, { method, headers, body: method === "GET" ? undefined : "{}" });
  await res.arrayBuffer();
  return res.headers.get("x-settle-served-by");
}

test("every route declared hot is served by the fast lane under npm start, and nothing else is", async () => {
  const doc = (await (await fetch(`${bases().lane}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { "x-settle-hot"?: boolean }>>;
  };
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      path,
      method: method.toUpperCase(),
      hot: op["x-settle-hot"] === true,
    })),
  );
  const hot = operations.filter((op) => op.hot).map((op) => `${op.method} ${op.path}`);
  // The runtime's calls on every tool call: a route that loses `hot: true` (or a new one that gains it) shows here.
  expect(hot.sort()).toEqual([
    "GET /api/v1/invocations/{invocation_id}/decision",
    "POST /api/v1/envelopes",
    "POST /api/v1/guard",
    "POST /api/v1/otlp/v1/traces",
    "POST /v1/traces",
  ]);
  for (const op of operations) {
    const path = op.path.replace(/\{(\w+)\}/g, "x");
    const headers = json(state.key);
    expect(await servedBy(bases().lane, op.method, path, headers), `${op.method} ${op.path} under npm start`).toBe(
      op.hot ? "fast-lane" : null,
    );
    if (op.hot)
      expect(
        await servedBy(bases().next, op.method, path, headers),
        `${op.method} ${op.path} with SETTLE_FAST_LANE=off`,
      ).toBeNull();
  }
});
