import { createParser } from "eventsource-parser";
import type { UpstreamAnswer } from "./outcomes.js";

// One JSON-RPC request POSTed to the upstream Streamable HTTP server, and its
// answer read from either response shape the transport allows: one JSON
// body, or an SSE stream that may carry notifications (progress, logs) and
// the server's own requests before the answer. Those are handed to
// `onInterim` as they come, for the client; the answer ends the exchange.
// What the answer's absence means depends on when it happened: no
// connection at all (refused) means the call was never sent; a stream that
// ended or broke after the POST went out means nobody knows.

export type Refusal = { status: number; headers: Headers; body: Uint8Array };

export type ExchangeResult = { answer: UpstreamAnswer; refusal: Refusal | null };

export type ExchangeInput = {
  url: string;
  headers: Headers;
  body: Record<string, unknown>;
  id: string | number;
  signal: AbortSignal;
  onInterim: (message: Record<string, unknown>) => void;
};

function neverConnected(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code === "ECONNREFUSED" || cause?.code === "ENOTFOUND" || cause?.code === "EAI_AGAIN";
}

function answerOf(message: Record<string, unknown>): UpstreamAnswer {
  if (message.error && typeof message.error === "object")
    return { kind: "error", error: message.error as { code: number; message: string } };
  return { kind: "result", result: (message.result as Record<string, unknown>) ?? {} };
}

const isAnswerTo = (m: Record<string, unknown>, id: string | number) => m.id === id && ("result" in m || "error" in m);

async function readStream(response: Response, input: ExchangeInput): Promise<UpstreamAnswer> {
  let answer: UpstreamAnswer | null = null;
  const parser = createParser({
    onEvent: (event) => {
      if (answer || event.data.trim() === "") return;
      let message: unknown;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      for (const m of Array.isArray(message) ? message : [message]) {
        if (typeof m !== "object" || m === null) continue;
        if (isAnswerTo(m, input.id)) answer = answerOf(m);
        else input.onInterim(m);
      }
    },
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (answer) {
        void reader.cancel().catch(() => {});
        return answer;
      }
    }
  } catch (error) {
    if (answer) return answer;
    return {
      kind: "lost",
      why: input.signal.aborted ? "cancelled" : "stream_broken",
      detail: `the SSE stream broke (${(error as Error).message})`,
    };
  }
  return answer ?? { kind: "lost", why: "stream_broken", detail: "the SSE stream ended without an answer" };
}

export async function exchange(input: ExchangeInput): Promise<ExchangeResult> {
  let response: Response;
  try {
    response = await fetch(input.url, {
      method: "POST",
      headers: input.headers,
      body: JSON.stringify(input.body),
      signal: input.signal,
    });
  } catch (error) {
    if (neverConnected(error))
      return {
        answer: {
          kind: "not_sent",
          detail: `no connection to the server (${(error as { cause?: { code?: string } }).cause?.code})`,
        },
        refusal: null,
      };
    return {
      answer: {
        kind: "lost",
        why: input.signal.aborted ? "cancelled" : "stream_broken",
        detail: `the request failed after it was sent (${(error as Error).message})`,
      },
      refusal: null,
    };
  }
  if (response.status >= 400 && response.status < 500) {
    // Refused before anything ran (an expired session, a bad header): the client gets this response as it is.
    const body = new Uint8Array(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
    return {
      answer: { kind: "refused", status: response.status, detail: `HTTP ${response.status} from the server` },
      refusal: { status: response.status, headers: response.headers, body },
    };
  }
  if (response.status >= 500 || !response.body) {
    await response.body?.cancel().catch(() => {});
    return {
      answer: { kind: "lost", why: "stream_broken", detail: `HTTP ${response.status} from the server` },
      refusal: null,
    };
  }
  const type = (response.headers.get("content-type") ?? "").toLowerCase();
  if (type.includes("text/event-stream")) return { answer: await readStream(response, input), refusal: null };
  try {
    const parsed = (await response.json()) as unknown;
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
    const mine = messages.find((m) => m && isAnswerTo(m, input.id));
    if (mine) return { answer: answerOf(mine), refusal: null };
    return {
      answer: { kind: "lost", why: "stream_broken", detail: "the JSON response held no answer to the call" },
      refusal: null,
    };
  } catch (error) {
    return {
      answer: {
        kind: "lost",
        why: input.signal.aborted ? "cancelled" : "stream_broken",
        detail: `the response broke (${(error as Error).message})`,
      },
      refusal: null,
    };
  }
}
