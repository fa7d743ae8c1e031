import http from "node:http";
import net from "node:net";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { readState, settleCli, startAnother } from "./server";

// What `npm start` does with requests meant to cost it: a sign-in body far
// over any sign-in's size, JSON nested thousands deep, and clients that hold
// connections open (headers or a body that never finish, more connections
// than it allows). Each is refused with a bounded cost; long-polled decisions,
// which hold connections by design, still work (docs/decisions/025-server-limits.md).

const state = readState().console;
const run = randomBytes(4).toString("hex");

type Answer = { status: number; body: string; etag?: string; error?: string };

/** Sends `total` bytes of a sign-in body in 1 MiB chunks (declared or chunked), stopping once answered. */
function bigSignIn(baseURL: string, total: number, declared: boolean): Promise<Answer & { sent: number }> {
  const url = new URL(baseURL);
  const head = Buffer.from('{"email":"admin@example.com","password":"');
  const tail = Buffer.from('"}');
  return new Promise((resolve) => {
    const headers: Record<string, string> = { "content-type": "application/json", origin: baseURL };
    if (declared) headers["content-length"] = String(total);
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: "/api/auth/sign-in/email",
      headers,
      agent: false,
    });
    let sent = 0;
    let answered: (Answer & { sent: number }) | null = null;
    const done = (answer: Answer) => {
      answered ??= { ...answer, sent };
      req.destroy();
      resolve(answered);
    };
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", (error) => done({ status: 0, body: "", error: error.message }));
    const chunk = Buffer.alloc(1024 * 1024, 0x70);
    const middle = total - head.length - tail.length;
    let written = 0;
    req.write(head);
    sent = head.length;
    const pump = () => {
      while (!answered && !req.destroyed && written < middle) {
        const piece = chunk.subarray(0, Math.min(chunk.length, middle - written));
        written += piece.length;
        sent += piece.length;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
      if (answered || req.destroyed) return;
      sent += tail.length;
      req.end(tail);
    };
    pump();
  });
}

/**
 * bigSignIn, tried again (at most twice) when the connection broke before an answer: a client still sending
 * when the server answers and closes can see the reset before the answer (TCP drops what it had not read).
 * The server lingers to prevent that (bin/settle-server.mjs); on a loaded machine it can still happen.
 */
async function bigSignInAnswered(baseURL: string, total: number, declared: boolean) {
  let answer = await bigSignIn(baseURL, total, declared);
  for (let retry = 0; retry < 2 && answer.status === 0; retry++) answer = await bigSignIn(baseURL, total, declared);
  return answer;
}

/** The server's resident memory, MB. */
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

function send(
  baseURL: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  const url = new URL(baseURL);
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), etag: res.headers.etag }),
      );
    });
    req.on("error", (error) => resolve({ status: 0, body: "", error: error.message }));
    req.end(body);
  });
}

test("a sign-in body over 64 KiB is refused with 413 and Settle's envelope, without the server reading it whole", async () => {
  test.setTimeout(120_000);
  for (const declared of [true, false]) {
    const answer = await bigSignInAnswered(state.baseURL, 2 * 1024 * 1024, declared);
    expect(
      answer.status,
      `2 MiB, ${declared ? "declared" : "chunked"}: ${answer.error ?? answer.body.slice(0, 200)}`,
    ).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({
      ok: false,
      code: "PAYLOAD_TOO_LARGE",
      safe_details: { limit_bytes: 65_536 },
    });
  }
  // The 400 MiB took the server from 0.5 to 2.0 GB; 256 MiB now costs it next to nothing.
  const before = rssMb(state.pid);
  const big = await bigSignInAnswered(state.baseURL, 256 * 1024 * 1024, false);
  await new Promise((r) => setTimeout(r, 500));
  const growth = rssMb(state.pid) - before;
  console.log(
    `sign-in of 256 MiB, chunked: ${big.status} after ${(big.sent / 1024 / 1024).toFixed(1)} MiB sent; server RSS ${before.toFixed(0)} MB → +${growth.toFixed(1)} MB`,
  );
  expect(big.status, big.error).toBe(413);
  expect(big.sent).toBeLessThan(64 * 1024 * 1024);
  expect(growth).toBeLessThan(50);
  // The server still signs people in.
  const ok = await send(
    state.baseURL,
    "POST",
    "/api/auth/sign-in/email",
    { "content-type": "application/json", origin: state.baseURL },
    JSON.stringify({ email: state.adminEmail, password: state.adminPassword }),
  );
  expect(ok.status).toBe(200);
});

test("JSON nested 10,000 deep is a typed 400 on the guard and an operator action, and its record's own rejection in ingest", async () => {
  settleCli(state.databaseUrl, [
    "users",
    "create",
    "--email",
    `deep-${run}@example.com`,
    "--role",
    "operator",
    "--password",
    "deep operator password",
  ]);
  const token = settleCli(state.databaseUrl, [
    "tokens",
    "create",
    "--email",
    `deep-${run}@example.com`,
    "--name",
    "e2e deep",
  ]);
  const deepArray = `${"[".repeat(10_000)}1${"]".repeat(10_000)}`;
  const deepObject = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
  const key = (k: string) => ({ "content-type": "application/json", authorization: `Bearer ${k}` });
  for (const body of [deepArray, deepObject, `{"task_id":"t","tool":${deepArray},"idempotency_key":"k"}`]) {
    for (const [path, k] of [
      ["/api/v1/guard", state.key],
      ["/api/v1/invocations/deep-i/actions", token],
    ] as const) {
      const answer = await send(state.baseURL, "POST", path, key(k), body);
      expect(answer.status, `${path}: ${answer.body.slice(0, 200)}`).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({
        ok: false,
        code: "INVALID_REQUEST",
        safe_details: { limit_depth: 128 },
      });
    }
  }
  const good = JSON.stringify({
    event_id: `deep-${run}`,
    task_id: `deep-${run}`,
    invocation_id: `deep-${run}`,
    tool: "x",
    envelope: { ok: true },
  });
  const batch = await send(
    state.baseURL,
    "POST",
    "/api/v1/envelopes",
    key(state.key),
    `{"records":[${deepObject},{"task_id":"t","invocation_id":"i","tool":"x","envelope":${deepArray}},${good}]}`,
  );
  expect(batch.status).toBe(207);
  expect(
    JSON.parse(batch.body).results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status),
  ).toEqual(["RECORD_TOO_DEEP", "ENVELOPE_TOO_DEEP", "accepted"]);
  const ndjson = await send(
    state.baseURL,
    "POST",
    "/api/v1/envelopes",
    { ...key(state.key), "content-type": "application/x-ndjson" },
    `${deepObject}\n${good}\n`,
  );
  expect(ndjson.status).toBe(207);
  expect(
    JSON.parse(ndjson.body).results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status),
  ).toEqual(["RECORD_TOO_DEEP", "duplicate"]);
});

test.describe("connections: request and header timeouts, and the cap", () => {
  let server: Awaited<ReturnType<typeof startAnother>>;
  test.beforeAll(async () => {
    test.setTimeout(90_000);
    server = await startAnother(state.databaseUrl, {
      SETTLE_REQUEST_TIMEOUT_S: "3",
      SETTLE_HEADERS_TIMEOUT_S: "1",
      SETTLE_MAX_CONNECTIONS: "6",
    });
  });
  test.afterAll(() => server?.stop());

  /** Opens a raw connection, writes `text`, and resolves with what came back and when the server closed it. */
  function hold(text: string, every?: string): Promise<{ ms: number; reply: string }> {
    const url = new URL(server.baseURL);
    return new Promise((resolve) => {
      const started = Date.now();
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(text));
      const drip = every ? setInterval(() => socket.writable && socket.write(every), 200) : null;
      let reply = "";
      socket.on("data", (d) => (reply += d.toString("utf8")));
      socket.on("close", () => {
        if (drip) clearInterval(drip);
        resolve({ ms: Date.now() - started, reply });
      });
      socket.on("error", () => undefined);
      setTimeout(() => socket.destroy(), 15_000);
    });
  }

  test("headers that never end, and a body that never ends, are cut off at their timeouts", async () => {
    test.setTimeout(60_000);
    const headers = await hold("POST /api/v1/guard HTTP/1.1\r\nHost: x\r\n", "X-Slow: 1\r\n");
    expect(headers.ms).toBeGreaterThanOrEqual(900);
    expect(headers.ms).toBeLessThan(3_500);
    expect(headers.reply).toMatch(/^HTTP\/1\.1 408/);

    const body = await hold(
      `POST /api/v1/guard HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${state.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
      "1\r\n \r\n",
    );
    expect(body.ms).toBeGreaterThanOrEqual(2_900);
    expect(body.ms).toBeLessThan(5_500);
    expect(body.reply).toMatch(/^HTTP\/1\.1 408/);
  });

  test("a long-polled decision outlasts the request timeout: the request had arrived", async () => {
    test.setTimeout(60_000);
    const id = `lp-${run}`;
    const ingest = await send(
      server.baseURL,
      "POST",
      "/api/v1/envelopes",
      { "content-type": "application/json", authorization: `Bearer ${state.key}` },
      JSON.stringify({
        event_id: id,
        task_id: id,
        invocation_id: id,
        tool: "charge_card",
        envelope: { ok: false, code: "TIMEOUT", commit_state: "unknown" },
      }),
    );
    expect(ingest.status).toBe(207);
    const path = `/api/v1/invocations/${id}/decision`;
    const first = await send(server.baseURL, "GET", path, { authorization: `Bearer ${state.key}` });
    expect(first.status).toBe(200);
    const etag = first.etag!;
    const started = Date.now();
    const held = await send(server.baseURL, "GET", `${path}?wait=5`, {
      authorization: `Bearer ${state.key}`,
      "if-none-match": etag,
    });
    expect(held.status).toBe(304);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
  });

  test("past SETTLE_MAX_CONNECTIONS a new connection is closed at once, and the operator is told", async () => {
    test.setTimeout(60_000);
    const id = `cap-${run}`;
    await send(
      server.baseURL,
      "POST",
      "/api/v1/envelopes",
      { "content-type": "application/json", authorization: `Bearer ${state.key}` },
      JSON.stringify({ event_id: id, task_id: id, invocation_id: id, tool: "x", envelope: { ok: true } }),
    );
    const etag = (
      await send(server.baseURL, "GET", `/api/v1/invocations/${id}/decision`, { authorization: `Bearer ${state.key}` })
    ).etag!;
    // Six long polls hold the six connections allowed (every request here is on a connection of its own, closed after).
    const polls = Array.from({ length: 6 }, () =>
      send(server.baseURL, "GET", `/api/v1/invocations/${id}/decision?wait=4`, {
        authorization: `Bearer ${state.key}`,
        "if-none-match": etag,
      }),
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const refused = await send(server.baseURL, "GET", "/api/health", {});
    expect(refused.status).toBe(0);
    expect(refused.error).toMatch(/socket hang up|ECONNRESET/);
    expect((await Promise.all(polls)).map((p) => p.status)).toEqual([304, 304, 304, 304, 304, 304]);
    expect((await send(server.baseURL, "GET", "/api/health", {})).status).toBe(200);
    expect(server.output()).toMatch(/connection refused: 6 are open \(SETTLE_MAX_CONNECTIONS\)/);
  });
});
