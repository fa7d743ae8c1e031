import http from "node:http";
import { randomBytes } from "node:crypto";
import { expect } from "@playwright/test";

// Requests a server answers before it has read their body, and what a pooling client sends next, for the
// specs that check an early answer never costs the request after it (e2e/early-answers.spec.ts under
// `npm start`, e2e/sign-in-dev.spec.ts under `next dev`).

type Shape = {
  label: string;
  path: string;
  headers: Record<string, string>;
  body: () => string | Buffer;
  status: number;
};
const big = "x".repeat(72_000);
const run = randomBytes(4).toString("hex");

/** Requests answered before their body is read: by Content-Length, before authentication, by content type. */
export function earlyShapes(key: string): Shape[] {
  const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  return [
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
}

/** An ordinary record, answered after its whole body was read. */
export const record = (side: string, n: number) => ({
  event_id: `ea-${run}-${side}-${n}`,
  task_id: `ea-${run}-${side}`,
  invocation_id: `ea-${run}-${side}-${n}`,
  tool: "lookup_price",
  effect_class: "read",
  envelope: { outcome: "ok" },
});

export type Answer = { status: number; connection: string | null; body: any; reused?: boolean };
export type Send = (path: string, headers: Record<string, string>, body: string | Buffer) => Promise<Answer>;

/** Through node's fetch: undici's pool, which keeps connections alive. */
export function viaFetch(baseURL: string): Send {
  return async (path, headers, body) => {
    const res = await fetch(`${baseURL}${path}`, { method: "POST", headers, body: new Uint8Array(Buffer.from(body)) });
    const text = await res.text();
    return { status: res.status, connection: res.headers.get("connection"), body: text ? JSON.parse(text) : null };
  };
}

/** Through node's http with this agent (keepAlive: true); `reused` says whether the request went out on a kept connection. */
export function viaAgent(agent: http.Agent, baseURL: string): Send {
  const url = new URL(baseURL);
  return (path, headers, body) =>
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

/**
 * `rounds` of an early-answered request, then an ordinary ingest on the same pool at once: every ordinary
 * request answered and its record accepted. `closes`: the early answers must say `Connection: close`
 * (bin/settle-server.mjs); otherwise they may keep the connection, having read and dropped the body.
 */
export async function earlyThenOrdinary(
  send: Send,
  options: { key: string; rounds: number; side: string; closes: boolean },
): Promise<Answer[]> {
  const shapes = earlyShapes(options.key);
  const auth = { authorization: `Bearer ${options.key}`, "content-type": "application/json" };
  const normals: Answer[] = [];
  for (let n = 0; n < options.rounds; n += 1) {
    const shape = shapes[n % shapes.length]!;
    const early = await send(shape.path, shape.headers, shape.body());
    expect(early.status, `round ${n}: ${shape.label}`).toBe(shape.status);
    expect(early.body?.ok, `round ${n}: Settle's envelope`).toBe(false);
    if (options.closes) expect(early.connection, `round ${n}: ${shape.label} closes its connection`).toBe("close");
    let normal: Answer;
    try {
      normal = await send("/api/v1/envelopes", auth, JSON.stringify(record(options.side, n)));
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
