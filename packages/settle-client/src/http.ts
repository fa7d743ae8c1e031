import { isErrorEnvelope, SettleError } from "./errors.js";
import { parseExactJson, stringifyExactJson } from "./exact-json.js";

// One request to Settle, resent only when Settle's answer (or the lack of
// one) says resending is safe and useful: a lost connection, a 429, or a 5xx
// whose error envelope allows a retry. Every call the client makes is safe to
// resend (docs/outcome-model.md §5) — ingest is idempotent by event_id, reads
// change nothing, and a resent guard can at worst deny its own intent as in
// flight. A connection reset or closed before any byte of the answer (a pooled
// connection the server had given up on) is resent at once, once, whatever
// maxRetries says: the pool has dropped that connection, so the resend goes
// out on another one. Bodies are written and answers read with exact-json.ts: an integer past 2^53 is a
// bigint with its digits both ways (a person's approved edit of an order number reaches the tool as approved).

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export type HttpOptions = {
  url: string;
  key: string;
  fetch: FetchLike;
  /** Resends of one request after a failure that allows it. */
  maxRetries: number;
  timeoutMs: number;
  sleep: (ms: number) => Promise<void>;
  /** A server's not_before further away than this is waited for only this long. */
  maxRetryWaitMs: number;
};

/** `resent`: an earlier send of this request may have been processed without its answer reaching us. */
export type HttpAnswer = { status: number; body: unknown; headers: Headers; resent: boolean };

type RequestInput = {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** Aborts the request (and its resends), e.g. a worker being stopped mid long poll. */
  signal?: AbortSignal;
};

const backoff = (attempt: number) => Math.min(250 * 2 ** attempt, 10_000);

/** How long to wait before resending after this answer, or null when it must not be resent. */
function retryDelay(status: number, body: unknown, attempt: number, maxWaitMs: number): number | null {
  if (isErrorEnvelope(body)) {
    const { retry } = body;
    if ((retry.directive !== "after_delay" && retry.directive !== "allowed") || retry.max_attempts_remaining === 0)
      return null;
    const notBefore = retry.not_before ? Date.parse(retry.not_before) - Date.now() : Number.NaN;
    return Math.min(Math.max(Number.isNaN(notBefore) ? backoff(attempt) : notBefore, 50), maxWaitMs);
  }
  // A proxy in front of Settle answering without an envelope.
  return status === 429 || status === 502 || status === 503 || status === 504 ? backoff(attempt) : null;
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return null;
  try {
    return parseExactJson(text);
  } catch {
    return text;
  }
}

function refusal(status: number, body: unknown, path: string): SettleError {
  if (isErrorEnvelope(body))
    return new SettleError(`${path}: HTTP ${status} ${body.code}: ${body.agent_message}`, {
      status,
      code: body.code,
      envelope: body,
    });
  return new SettleError(`${path}: HTTP ${status} without Settle's error envelope`, { status, code: `HTTP_${status}` });
}

export async function request(options: HttpOptions, input: RequestInput): Promise<HttpAnswer> {
  const target = `${options.url.replace(/\/+$/, "")}${input.path}`;
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.key}`,
    accept: "application/json",
    ...input.headers,
  };
  if (input.body !== undefined) headers["content-type"] = "application/json";
  const body = input.body === undefined ? undefined : stringifyExactJson(input.body);
  let last = new SettleError(`${input.path}: not sent`, { status: 0, code: "UNREACHABLE" });
  let wait = 0;
  let resent = false;
  let brokenResent = false;

  for (let attempt = 0; attempt <= options.maxRetries; attempt += 1) {
    if (attempt > 0 && wait > 0) await options.sleep(wait);
    let res: Response;
    try {
      res = await options.fetch(target, {
        method: input.method,
        headers,
        body,
        signal: withTimeout(input.signal, input.timeoutMs ?? options.timeoutMs),
      });
    } catch (error) {
      if (input.signal?.aborted) throw input.signal.reason ?? error;
      // The request may or may not have arrived; resending it is safe.
      last = new SettleError(`${input.path}: no answer from Settle (${describe(error)})`, {
        status: 0,
        code: "UNREACHABLE",
      });
      resent = true;
      if (!brokenResent && connectionBroke(error)) {
        // Not one of the retries: sent again at once, on another connection.
        brokenResent = true;
        wait = 0;
        attempt -= 1;
        continue;
      }
      wait = backoff(attempt);
      continue;
    }
    const parsed = await readJson(res);
    if (res.status < 400) return { status: res.status, body: parsed, headers: res.headers, resent };
    last = refusal(res.status, parsed, input.path);
    const delay =
      res.status === 429 || res.status >= 500 ? retryDelay(res.status, parsed, attempt, options.maxRetryWaitMs) : null;
    if (delay === null) throw last;
    wait = delay;
    // Settle says whether a failed request stored anything; a 5xx without an envelope may have.
    if (!isErrorEnvelope(parsed) || parsed.commit_state !== "not_committed") resent = true;
  }
  throw last;
}

// What fetch implementations say when a connection was reset or closed under a request, before its answer
// began: node's (undici) in the error's cause, as a socket error code. A refused connection is not one (nothing
// was sent; the usual back-off applies), nor is a timeout.
const BROKEN = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** Whether fetch failed because its connection broke: a reset, or the other side closing it. */
export function connectionBroke(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && BROKEN.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function withTimeout(signal: AbortSignal | undefined, ms: number): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  if (!signal) return timeout;
  // AbortSignal.any is Node 20.3+; before it, the caller's signal alone still stops the request.
  return typeof AbortSignal.any === "function" ? AbortSignal.any([signal, timeout]) : signal;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.name === "TimeoutError" ? "timed out" : error.message;
  return String(error);
}
