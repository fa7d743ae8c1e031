import type { Readable } from "node:stream";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import type { JsonRpcError, UpstreamAnswer } from "./outcomes.js";

// The MCP server the stdio gateway launches, through the SDK's stdio client
// transport. It may exit at any moment (a crash, a kill): every request the
// gateway sent it and that is unanswered is then lost — reported as unknown,
// since it may have run — and the next message starts it again. A 2025-era
// client opened the connection with `initialize`: the new process gets the
// same `initialize` and `notifications/initialized` before anything else, so
// the client keeps its session without knowing the server restarted.

export type StdioUpstream = {
  /** Passes a message on, starting the server first if it is not running. */
  send: (message: JSONRPCMessage) => Promise<void>;
  /** A request of the gateway's own (a forwarded tools/call, a probe): resolves with the server's answer, or its absence. */
  request: (method: string, params: Record<string, unknown>) => { id: string; answer: Promise<UpstreamAnswer> };
  close: () => Promise<void>;
  restarts: () => number;
};

export type UpstreamOptions = {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Every message from the server that is not an answer to one of the gateway's own requests. */
  onMessage: (message: JSONRPCMessage) => void;
  /** The server exited; the requests of the client still unanswered are the caller's to answer. */
  onExit: (detail: string) => void;
  onStderr?: (chunk: Buffer) => void;
};

type Waiting = { resolve: (answer: UpstreamAnswer) => void; written: boolean };

const INIT_TIMEOUT_MS = 15_000;

export function createStdioUpstream(options: UpstreamOptions): StdioUpstream {
  let transport: StdioClientTransport | null = null;
  /** The process last spawned, started or not: its exit fails what waits on it. */
  let live: StdioClientTransport | null = null;
  let starting: Promise<StdioClientTransport> | null = null;
  let opening: { initialize: Record<string, unknown>; initialized: boolean } | null = null;
  let restarts = 0;
  let counter = 0;
  let closed = false;
  const waiting = new Map<string, Waiting>();

  const nextId = (kind: string) => `settle-gw:${kind}:${(counter += 1)}`;

  function settleWaiting(id: string, answer: UpstreamAnswer): boolean {
    const w = waiting.get(id);
    if (!w) return false;
    waiting.delete(id);
    w.resolve(answer);
    return true;
  }

  function onMessage(message: JSONRPCMessage): void {
    const m = message as { id?: unknown; result?: Record<string, unknown>; error?: JsonRpcError };
    if (typeof m.id === "string" && m.id.startsWith("settle-gw:") && ("result" in m || "error" in m)) {
      settleWaiting(m.id, m.error ? { kind: "error", error: m.error } : { kind: "result", result: m.result ?? {} });
      return;
    }
    options.onMessage(message);
  }

  function onClose(t: StdioClientTransport): void {
    if (live !== t) return;
    live = null;
    transport = null;
    for (const [id, w] of [...waiting]) {
      settleWaiting(
        id,
        w.written
          ? { kind: "lost", why: "crashed", detail: "the server process exited" }
          : { kind: "not_sent", detail: "the server process exited before the call was written" },
      );
    }
    if (!closed) options.onExit("the server process exited");
  }

  async function replayOpening(t: StdioClientTransport): Promise<void> {
    if (!opening) return;
    const id = nextId("init");
    const answered = new Promise<UpstreamAnswer>((resolve) => waiting.set(id, { resolve, written: true }));
    await t.send({ jsonrpc: "2.0", id, method: "initialize", params: opening.initialize } as JSONRPCMessage);
    const timeout = new Promise<UpstreamAnswer>((resolve) =>
      setTimeout(() => resolve({ kind: "lost", why: "timeout", detail: "initialize" }), INIT_TIMEOUT_MS).unref(),
    );
    const answer = await Promise.race([answered, timeout]);
    if (answer.kind !== "result") throw new Error(`the restarted server did not initialize (${answer.kind})`);
    if (opening.initialized) await t.send({ jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage);
  }

  async function start(): Promise<StdioClientTransport> {
    const t = new StdioClientTransport({
      command: options.command,
      args: options.args,
      env: options.env,
      stderr: options.onStderr ? "pipe" : "inherit",
    });
    t.onmessage = onMessage;
    t.onclose = () => onClose(t);
    t.onerror = () => {};
    live = t;
    if (options.onStderr) (t.stderr as Readable | null)?.on("data", options.onStderr);
    await t.start();
    transport = t;
    if (opening) {
      restarts += 1;
      await replayOpening(t);
    }
    return t;
  }

  async function ensure(): Promise<StdioClientTransport> {
    if (transport) return transport;
    starting ??= start().finally(() => {
      starting = null;
    });
    return starting;
  }

  async function send(message: JSONRPCMessage): Promise<void> {
    const m = message as { method?: string; params?: Record<string, unknown> };
    const t = await ensure();
    if (m.method === "initialize" && "id" in message) opening = { initialize: m.params ?? {}, initialized: false };
    if (m.method === "notifications/initialized" && opening) opening.initialized = true;
    await t.send(message);
  }

  return {
    send,
    request: (method, params) => {
      const id = nextId("call");
      const entry: Waiting = { resolve: () => {}, written: false };
      const answer = new Promise<UpstreamAnswer>((resolve) => {
        entry.resolve = resolve;
      });
      waiting.set(id, entry);
      void ensure()
        .then(async (t) => {
          entry.written = true;
          await t.send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage);
        })
        .catch((error: unknown) =>
          settleWaiting(id, {
            kind: entry.written ? "lost" : "not_sent",
            why: "crashed",
            detail: String((error as Error).message ?? error),
          } as UpstreamAnswer),
        );
      return { id, answer };
    },
    close: async () => {
      closed = true;
      await transport?.close();
    },
    restarts: () => restarts,
  };
}
