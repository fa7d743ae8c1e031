import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createSettleClient, type SettleRecord } from "../src/index.js";
import { connectionBroke } from "../src/http.js";

// A connection that breaks under a request before any byte of its answer — a pooled keep-alive
// connection the server had given up on — through node's own fetch and its connection pool: the
// request is sent again at once (no back-off), once, and goes out on another connection.

type Seen = { socket: number; path: string };

let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** A Settle stand-in that answers ingest, and resets the connection under the requests `breaks` picks. */
async function serve(breaks: (seen: Seen, count: number) => boolean) {
  const sockets = new Map<Socket, number>();
  const seen: Seen[] = [];
  server = createServer((req: IncomingMessage, res) => {
    const socket = sockets.get(req.socket) ?? sockets.set(req.socket, sockets.size + 1).get(req.socket)!;
    const entry = { socket, path: req.url ?? "" };
    seen.push(entry);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (breaks(entry, seen.length)) return void req.socket.resetAndDestroy();
      const { records } = JSON.parse(Buffer.concat(chunks).toString()) as { records: SettleRecord[] };
      res.writeHead(207, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          results: records.map((r, index) => ({
            index,
            status: "accepted",
            event_id: r.event_id,
            invocation_id: r.invocation_id,
          })),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const record = (n: number): SettleRecord => ({
  event_id: `rt:t:${n}:outcome`,
  task_id: "t",
  invocation_id: `inv-${n}`,
  tool: "read_price",
  envelope: { outcome: "ok" },
});

function client(url: string, maxRetries: number) {
  const sleeps: number[] = [];
  const settle = createSettleClient({
    url,
    key: "stl_rk_test",
    maxRetries,
    batchDelayMs: 0,
    sleep: async (ms) => void sleeps.push(ms),
  });
  return { settle, sleeps };
}

describe("a connection that breaks before any byte of the answer", () => {
  it("is sent again at once on another connection, even with no retries allowed", async () => {
    // The second request on the first connection is reset: the pool had kept it for reuse.
    const { url, seen } = await serve((s, count) => s.socket === 1 && count === 2);
    const { settle, sleeps } = client(url, 0);
    expect(await settle.report(record(1))).toMatchObject({ status: "accepted", resent: false });
    expect(await settle.report(record(2))).toMatchObject({ status: "accepted", resent: true });
    expect(seen.map((s) => s.socket)).toEqual([1, 1, 2]);
    expect(sleeps).toEqual([]);
  });

  it("is resent once: a second break follows the retries and their back-off", async () => {
    const { url, seen } = await serve((_, count) => count === 2 || count === 3);
    const none = client(url, 0);
    await none.settle.report(record(1));
    await expect(none.settle.report(record(2))).rejects.toMatchObject({ code: "UNREACHABLE", status: 0 });
    expect(seen).toHaveLength(3);
    expect(none.sleeps).toEqual([]);

    const { url: again, seen: seenAgain } = await (async () => {
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      return serve((_, count) => count === 2 || count === 3);
    })();
    const one = client(again, 1);
    await one.settle.report(record(1));
    expect(await one.settle.report(record(2))).toMatchObject({ status: "accepted", resent: true });
    expect(seenAgain).toHaveLength(4);
    expect(one.sleeps).toEqual([250]);
  });

  it("is told apart from a refused connection and a timeout, which are not resent at once", () => {
    const cause = (code: string) => new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });
    expect(connectionBroke(cause("ECONNRESET"))).toBe(true);
    expect(connectionBroke(cause("UND_ERR_SOCKET"))).toBe(true);
    expect(connectionBroke(cause("EPIPE"))).toBe(true);
    expect(connectionBroke(cause("ECONNREFUSED"))).toBe(false);
    expect(connectionBroke(new DOMException("The operation timed out.", "TimeoutError"))).toBe(false);
    expect(connectionBroke(new TypeError("Failed to fetch"))).toBe(false);
  });
});
