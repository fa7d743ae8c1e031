import type { Elicit } from "./approval.js";

// Elicitation over Streamable HTTP, for 2025-era clients that declared it in
// `initialize`: while a call waits for an approval, the gateway asks the
// client's user on the call's own SSE stream (a server→client request, as
// the transport allows), and takes the answer out of the POST that brings it
// back instead of passing it to the server, which never asked. Which
// sessions may be asked is read from the initialize exchange passing through.

type Answer = { action: string; content?: Record<string, unknown> };

const TIMEOUT_MS = 10 * 60_000;

export type HttpElicitation = ReturnType<typeof createHttpElicitation>;

export function createHttpElicitation() {
  const capable = new Set<string>();
  const waiting = new Map<string, (answer: Answer | null) => void>();
  let counter = 0;

  return {
    /** The client's initialize, and the session id the server's answer gave it. */
    noteInitialize(params: Record<string, unknown> | undefined, sessionId: string | null): void {
      const caps = params?.capabilities as { elicitation?: unknown } | undefined;
      if (sessionId && caps?.elicitation) capable.add(sessionId);
    },
    /** An Elicit for a call of this session, writing to its stream; null when the client cannot be asked. */
    forSession(sessionId: string, send: (message: Record<string, unknown>) => boolean): Elicit | null {
      if (!capable.has(sessionId)) return null;
      return (request) =>
        new Promise((resolve) => {
          const id = `settle-gw:elicit:${(counter += 1)}`;
          const timer = setTimeout(() => {
            waiting.delete(id);
            resolve(null);
          }, TIMEOUT_MS);
          waiting.set(id, (answer) => {
            clearTimeout(timer);
            resolve(answer);
          });
          if (!send({ jsonrpc: "2.0", id, method: "elicitation/create", params: { ...request } }))
            waiting.get(id)?.(null);
        });
    },
    /** Takes a client's answer to one of the gateway's questions; false for anything else. */
    takeAnswer(message: { id?: unknown; result?: unknown; error?: unknown; method?: unknown }): boolean {
      if (message.method !== undefined || typeof message.id !== "string") return false;
      const waiter = waiting.get(message.id);
      if (!waiter) return false;
      waiting.delete(message.id);
      waiter((message.result as Answer | undefined) ?? null);
      return true;
    },
  };
}
