import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import type { Elicit } from "./approval.js";
import type { ToolCatalog } from "./catalog.js";
import type { ClientReply, ToolCallParams } from "./forward.js";
import { handleToolCall, type GatewayDeps } from "./tool-call.js";
import { createStdioUpstream } from "./upstream-stdio.js";
import { startVerifier } from "./verifier.js";

// The stdio gateway: the client launches `settle-mcp -- <server command>`,
// talks to it on stdin/stdout, and the gateway launches the server and talks
// to it the same way. Every message passes through unchanged — initialize,
// tools/list, resources, prompts, notifications, progress, the server's own
// requests and the client's answers to them — except tools/call, which goes
// through Settle (tool-call.ts) and is sent to the server under an id of the
// gateway's own (a cancellation from the client is sent on under that id).

type Id = string | number;
type Msg = {
  jsonrpc: "2.0";
  id?: Id;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

export type StdioGatewayOptions = {
  command: string;
  args: string[];
  env: Record<string, string>;
  deps: Omit<GatewayDeps, "annotations">;
  catalog: ToolCatalog;
  stdin: Readable;
  stdout: Writable;
  onStderr?: (chunk: Buffer) => void;
  /** How long in-flight calls may still finish after the client went away. */
  drainMs?: number;
};

export type StdioGateway = { closed: Promise<void>; stop: () => Promise<void> };

const ELICIT_TIMEOUT_MS = 10 * 60_000;

export function startStdioGateway(options: StdioGatewayOptions): StdioGateway {
  const client = new StdioServerTransport(options.stdin, options.stdout);
  const sessionTask = `mcp-session:${randomUUID()}`;
  const deps: GatewayDeps = { ...options.deps, annotations: options.catalog.annotations };
  /** The client's tools/call requests in progress: their cancellation, and the id the server knows them by. */
  const calls = new Map<Id, { abort: AbortController; upstreamIds: string[] }>();
  /** The client's other requests, passed through: answered with an error if the server exits before it answers. */
  const passed = new Map<Id, string>();
  const elicitations = new Map<string, (answer: Msg) => void>();
  let elicitationSupported = false;
  let counter = 0;
  let ending = false;

  const toClient = (message: Msg) => client.send(message as JSONRPCMessage).catch(() => {});

  const upstream = createStdioUpstream({
    command: options.command,
    args: options.args,
    env: options.env,
    onStderr: options.onStderr,
    onMessage: (message) => {
      const m = message as Msg;
      if (m.id !== undefined && ("result" in m || "error" in m)) {
        if (passed.get(m.id) === "tools/list" && m.result) options.catalog.learn(m.result);
        passed.delete(m.id);
      }
      void toClient(m);
    },
    onExit: (detail) => {
      for (const id of passed.keys())
        void toClient({
          jsonrpc: "2.0",
          id,
          error: { code: -32603, message: `settle-mcp: ${detail}; the request was not answered` },
        });
      passed.clear();
    },
  });

  // Settle's asks about this server's unknown calls, answered by the rules' probes (verifier.ts).
  const verifier = startVerifier({
    config: deps.config,
    client: deps.settle.verifications,
    dispatch: (params) => upstream.request("tools/call", params).answer,
    worker: `settle-mcp/${sessionTask.slice("mcp-session:".length, "mcp-session:".length + 8)}`,
    onError: (message) => options.onStderr?.(Buffer.from(`settle-mcp: ${message}\n`)),
  });

  const elicit: Elicit = (request) => {
    if (!elicitationSupported) return Promise.resolve(null);
    const id = `settle-gw:elicit:${(counter += 1)}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        elicitations.delete(id);
        resolve(null);
      }, ELICIT_TIMEOUT_MS);
      elicitations.set(id, (answer) => {
        clearTimeout(timer);
        resolve((answer.result as { action: string; content?: Record<string, unknown> } | undefined) ?? null);
      });
      void toClient({ jsonrpc: "2.0", id, method: "elicitation/create", params: { ...request } });
    });
  };

  function sendReply(id: Id, reply: ClientReply): void {
    if (reply.kind === "result") void toClient({ jsonrpc: "2.0", id, result: reply.result });
    else if (reply.kind === "error") void toClient({ jsonrpc: "2.0", id, error: reply.error });
  }

  function onToolCall(m: Msg): void {
    const id = m.id as Id;
    const entry = { abort: new AbortController(), upstreamIds: [] as string[] };
    calls.set(id, entry);
    const dispatch = (params: ToolCallParams) => {
      const sent = upstream.request("tools/call", params);
      entry.upstreamIds.push(sent.id);
      return sent.answer;
    };
    void handleToolCall(
      deps,
      { params: m.params as ToolCallParams, sessionTask, cancelled: entry.abort.signal, elicit },
      dispatch,
    )
      .then((reply) => sendReply(id, reply))
      .catch((error: unknown) =>
        sendReply(id, { kind: "error", error: { code: -32603, message: `settle-mcp: ${(error as Error).message}` } }),
      )
      .finally(() => calls.delete(id));
  }

  function onClientMessage(message: JSONRPCMessage): void {
    const m = message as Msg;
    if (ending) return;
    if (m.id !== undefined && !m.method) {
      const waiter = typeof m.id === "string" ? elicitations.get(m.id) : undefined;
      if (waiter) {
        elicitations.delete(m.id as string);
        return waiter(m);
      }
    }
    if (m.method === "tools/call" && m.id !== undefined && typeof m.params?.name === "string") return onToolCall(m);
    if (m.method === "initialize")
      elicitationSupported = Boolean((m.params?.capabilities as { elicitation?: unknown } | undefined)?.elicitation);
    if (m.method === "notifications/cancelled") {
      const call = calls.get(m.params?.requestId as Id);
      if (call) {
        call.abort.abort();
        for (const upstreamId of call.upstreamIds)
          void upstream
            .send({ ...m, params: { ...m.params, requestId: upstreamId } } as JSONRPCMessage)
            .catch(() => {});
        return;
      }
    }
    if (m.id !== undefined && m.method) passed.set(m.id, m.method);
    upstream.send(message).catch((error: unknown) => {
      if (m.id !== undefined && m.method) {
        passed.delete(m.id);
        void toClient({
          jsonrpc: "2.0",
          id: m.id,
          error: { code: -32603, message: `settle-mcp: the server could not be started (${(error as Error).message})` },
        });
      }
    });
  }

  let stopping: Promise<void> | null = null;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const stop = () =>
    (stopping ??= (async () => {
      ending = true;
      await verifier?.stop();
      // The client is gone (or the gateway is told to stop): calls already sent still get their outcome recorded.
      const deadline = new Promise((r) => setTimeout(r, options.drainMs ?? 10_000).unref());
      await Promise.race([Promise.all(deps.registry.pending()), deadline]);
      await deps.settle.flush().catch(() => {});
      await upstream.close().catch(() => {});
      markClosed();
    })());
  client.onclose = () => void stop();
  client.onmessage = onClientMessage;
  client.onerror = () => {};
  void client.start();
  return { closed, stop };
}
