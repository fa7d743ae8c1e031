import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@/lib/webhooks/signature";

// A webhook receiver for tests, on 127.0.0.1 and a random port: it checks
// every request's signature the way the README tells runtimes to, answers 500
// while told to fail, and can hold answers back (slow or hanging receivers)
// or answer what a test sets for a path (huge, binary, endless, redirects).

export type Received = {
  path: string;
  /** The Host header: the URL's name even when Settle connected to an address it checked. */
  host: string;
  eventId: string;
  eventType: string;
  body: string;
  event: { id: string; type: string; data: Record<string, unknown> };
  verified: boolean;
  verifyFailure: string | null;
};

/** A canned answer. `endless` keeps writing chunks of `body` until the client goes away. */
export type CannedAnswer = {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  endless?: boolean;
};

export type Receiver = {
  url: (path?: string) => string;
  received: Received[];
  /** The next `n` requests get a 500. */
  failNext: (n: number) => void;
  /** Wait this long before answering every request. */
  delayMs: (ms: number) => void;
  /** What a path answers instead of 204 (or 500 while failing). */
  answers: Map<string, CannedAnswer>;
  /** The secret each path's endpoint signs with. */
  secrets: Map<string, string>;
  /** The receiver's clock for the timestamp check (the wall clock until set): tests move Settle's clock, so they move this one with it. */
  setNow: (now: Date) => void;
  close: () => Promise<void>;
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function answer(res: ServerResponse, canned: CannedAnswer): void {
  res.writeHead(canned.status, canned.headers);
  if (!canned.endless) {
    res.end(canned.body);
    return;
  }
  const chunk = Buffer.from(canned.body ?? "x".repeat(16_384));
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once("drain", pump);
  };
  pump();
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers = new Map<string, CannedAnswer>();
  const secrets = new Map<string, string>();
  let failures = 0;
  let delay = 0;
  let now: Date | null = null;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? "/";
    const check = verifySignature(
      secrets.get(path) ?? "",
      req.headers["settle-signature"] as string | undefined,
      body,
      { now: now ?? new Date() },
    );
    received.push({
      path,
      host: String(req.headers.host ?? ""),
      eventId: String(req.headers["settle-event-id"] ?? ""),
      eventType: String(req.headers["settle-event-type"] ?? ""),
      body,
      event: JSON.parse(body),
      verified: check.ok,
      verifyFailure: check.ok ? null : check.reason,
    });
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (failures > 0) {
      failures--;
      res.writeHead(500, { "content-type": "text/plain" }).end("receiver is down");
      return;
    }
    const canned = answers.get(path);
    if (canned) answer(res, canned);
    else res.writeHead(check.ok ? 204 : 400).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    received,
    failNext: (n) => {
      failures = n;
    },
    delayMs: (ms) => {
      delay = ms;
    },
    answers,
    secrets,
    setNow: (value) => {
      now = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
