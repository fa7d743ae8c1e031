import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as authPost } from "@/app/api/auth/[...all]/route";
import { errorEnvelopeSchema } from "@/lib/errors";
import { fastLane } from "@/server/fast-lane";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { guard, ingest, invocationActions } from "./routes";

// Bodies an attacker sends before anyone knows who they are: one that trickles
// in through the fast lane without a key, one far too big for a sign-in, and
// JSON nested thousands deep. Each is answered at once with Settle's envelope,
// never held, read whole or answered with a 500.

const ORIGIN = "http://settle.test";
const deep = (depth: number, inner = '"x"') => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

type Answer = { status: number; ms: number; body: string };

/** POSTs headers, then a byte every 100 ms that never ends; resolves with the first answer (or after `giveUpMs`). */
function trickle(
  server: Server,
  path: string,
  headers: Record<string, string>,
  giveUpMs = 4_000,
): Promise<Answer | null> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve) => {
    const started = Date.now();
    const req = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path,
      headers: { "transfer-encoding": "chunked", ...headers },
      agent: false,
    });
    const drip = setInterval(() => req.write("{"), 100);
    const finish = (answer: Answer | null) => {
      clearInterval(drip);
      clearTimeout(giveUp);
      req.destroy();
      resolve(answer);
    };
    const giveUp = setTimeout(() => finish(null), giveUpMs);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () =>
        finish({ status: res.statusCode ?? 0, ms: Date.now() - started, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", () => finish(null));
    req.write("{");
  });
}

describe("hostile bodies are refused before they cost anything", () => {
  let t: TestContext;
  let operator: string;
  let server: Server;

  beforeAll(async () => {
    t = await openSettle("postgres");
    operator = (await createOperator(t.db, "operator")).token;
    // The fast lane as bin/settle-server.mjs runs it: node's request straight to the route.
    server = createServer((req, res) => {
      if (!fastLane(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await t?.teardown();
  });

  it("the fast lane answers a request without a key, or with a wrong one, before its body has arrived", async () => {
    const wrong = `stl_rk_aaaaaaaa_${"b".repeat(32)}`;
    const cases: Array<[string, Record<string, string>, string]> = [
      ["/api/v1/guard", { "content-type": "application/json" }, "UNAUTHENTICATED"],
      ["/api/v1/envelopes", { "content-type": "application/json" }, "UNAUTHENTICATED"],
      ["/v1/traces", { "content-type": "application/x-protobuf" }, "UNAUTHENTICATED"],
      ["/api/v1/otlp/v1/traces", { "content-type": "application/json" }, "UNAUTHENTICATED"],
      [
        "/api/v1/envelopes",
        { "content-type": "application/json", authorization: `Bearer ${wrong}` },
        "UNAUTHENTICATED",
      ],
      ["/api/v1/guard", { "content-type": "application/json", authorization: "Bearer not-a-key" }, "UNAUTHENTICATED"],
    ];
    for (const [path, headers, code] of cases) {
      const answer = await trickle(server, path, headers);
      expect(answer, `${path} ${JSON.stringify(headers)}: no answer while the body trickled`).not.toBeNull();
      expect(answer!.status).toBe(401);
      // Well before the 4 s give-up, with room for a loaded machine.
      expect(answer!.ms).toBeLessThan(3_000);
      expect(errorEnvelopeSchema.parse(JSON.parse(answer!.body)).code).toBe(code);
    }
  });

  it("the fast lane still reads a keyed body to its end, and refuses one over the route's limit with 413", async () => {
    const { port } = server.address() as AddressInfo;
    const send = (body: string, chunked: boolean) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const headers: Record<string, string> = {
          "content-type": "application/json",
          authorization: `Bearer ${t.key}`,
        };
        if (chunked) headers["transfer-encoding"] = "chunked";
        const req = request(
          { host: "127.0.0.1", port, method: "POST", path: "/api/v1/guard", headers, agent: false },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (d: Buffer) => chunks.push(d));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
          },
        );
        req.on("error", reject);
        // In pieces, as a slow client sends it.
        for (let i = 0; i < body.length; i += 1000) req.write(body.slice(i, i + 1000));
        req.end();
      });
    const allowed = await send(
      JSON.stringify({
        task_id: "lane-t",
        tool: "charge_card",
        idempotency_key: "lane-k",
        envelope: { note: "y".repeat(20_000) },
      }),
      true,
    );
    expect(allowed.status).toBe(200);
    expect(JSON.parse(allowed.body)).toMatchObject({ allow: true });
    const tooBig = await send(
      JSON.stringify({ task_id: "lane-t", tool: "x", idempotency_key: "k", envelope: "x".repeat(200_000) }),
      true,
    );
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body)).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
  });

  it("a sign-in body over the limit is refused with 413 and Settle's envelope, declared or not", async () => {
    const big = `{"email":"a@example.com","password":"${"p".repeat(2 * 1024 * 1024)}"}`;
    const declared = await authPost(
      new Request(`${ORIGIN}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN, "content-length": String(big.length) },
        body: big,
      }),
    );
    expect(declared.status).toBe(413);
    expect(errorEnvelopeSchema.parse(await declared.json()).code).toBe("PAYLOAD_TOO_LARGE");

    // Streamed without a length: reading stops at the limit, the rest is never pulled.
    let pulled = 0;
    const chunk = new TextEncoder().encode("p".repeat(64 * 1024));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        if (pulled > 64 * 1024 * 1024) controller.close();
        else
          controller.enqueue(
            pulled === chunk.byteLength ? new TextEncoder().encode('{"email":"a@example.com","password":"') : chunk,
          );
      },
    });
    const streamed = await authPost(
      new Request(`${ORIGIN}/api/auth/sign-out`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: ORIGIN },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect(errorEnvelopeSchema.parse(await streamed.json()).code).toBe("PAYLOAD_TOO_LARGE");
    expect(pulled).toBeLessThan(1024 * 1024);
  });

  it("JSON nested 10,000 deep is a typed 400 on the guard and an operator action, and rejects its record alone in ingest", async () => {
    for (const raw of [
      deep(10_000),
      deepObject(10_000),
      `{"task_id":"t","tool":${deep(10_000)},"idempotency_key":"k"}`,
      `{"task_id":${deepObject(9_000)},"tool":"x","idempotency_key":"k","invocation_id":${deep(3_000)}}`,
    ]) {
      const answer = await call(guard, { key: t.key, raw, path: "/api/v1/guard" });
      expect(answer.status, raw.slice(0, 40)).toBe(400);
      expect(errorEnvelopeSchema.parse(answer.body).code).toBe("INVALID_REQUEST");
      expect(answer.body.safe_details).toMatchObject({ limit_depth: 128 });

      const action = await call(invocationActions, {
        key: operator,
        raw,
        params: { invocation_id: "i" },
        method: "POST",
        path: "/api/v1/invocations/i/actions",
      });
      expect(action.status).toBe(400);
      expect(errorEnvelopeSchema.parse(action.body).code).toBe("INVALID_REQUEST");
    }

    const good = (n: number) =>
      JSON.stringify({
        event_id: `deep-good-${n}`,
        task_id: "deep-t",
        invocation_id: `deep-i-${n}`,
        tool: "x",
        envelope: { ok: true },
      });
    // No event_id: the record's id would be a hash of all of it, the deep part included.
    const tooDeep = `{"task_id":"deep-t","invocation_id":"deep-i","tool":"x","extra":${deep(10_000)}}`;
    const inEnvelope = `{"event_id":"deep-env","task_id":"deep-t","invocation_id":"deep-i","tool":"x","envelope":${deepObject(10_000)}}`;
    const batch = await call(ingest, {
      key: t.key,
      raw: `{"records":[${good(1)},${tooDeep},${inEnvelope},${good(2)}]}`,
    });
    expect(batch.status).toBe(207);
    expect(
      batch.body.results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status),
    ).toEqual(["accepted", "RECORD_TOO_DEEP", "ENVELOPE_TOO_DEEP", "accepted"]);
    expect(batch.body.results[1].error.safe_details).toEqual({ path: "extra" });

    const ndjson = await call(ingest, {
      key: t.key,
      raw: [good(3), tooDeep, deep(10_000), good(4)].join("\n"),
      contentType: "application/x-ndjson",
    });
    expect(ndjson.status).toBe(207);
    expect(
      ndjson.body.results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status),
    ).toEqual(["accepted", "RECORD_TOO_DEEP", "INVALID_RECORD", "accepted"]);

    const one = await call(ingest, { key: t.key, raw: deepObject(10_000) });
    expect(one.status).toBe(207);
    expect(one.body.results[0].error.code).toBe("RECORD_TOO_DEEP");
  });

  it("a record nested just under the limit is still read (its envelope past redaction's 64 levels is its own rejection)", async () => {
    const res = await call(ingest, {
      key: t.key,
      raw: JSON.stringify({
        event_id: "deep-100",
        task_id: "deep-t",
        invocation_id: "deep-i2",
        tool: "x",
        envelope: JSON.parse(deep(100)),
      }),
    });
    expect(res.body.results[0].error.code).toBe("ENVELOPE_TOO_DEEP");
  });
});
