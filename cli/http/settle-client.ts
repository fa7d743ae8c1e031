import { errorEnvelopeSchema, type ErrorEnvelope } from "@/lib/errors";
import { createApiClient, type ApiClient } from "@/server/api-client";
import { parseExactJson, stringifyExactJson } from "@/lib/json/exact";
import type { Method } from "@/lib/http/route";
import { CliError, EXIT_UNREACHABLE, UsageError } from "../errors";

// Talks to Settle's API. Every request-level failure Settle can answer with
// is an error envelope (docs/outcome-model.md §2) that says whether and when to try again; this
// client follows it instead of guessing, and gives up after a bounded number
// of attempts. Resending is safe because ingest is idempotent by event_id.
// Commands call Settle through `api`, the client typed from the routes' own
// declarations (server/api-client.ts), so a changed route breaks them at
// compile time rather than at a customer's. Bodies are written and answers read as the console's client does
// (decision 039): an integer past 2^53 is a BigInt with its digits, never rounded and never a TypeError.

export type Answer = { status: number; body: unknown };

export type ClientOptions = {
  url: URL;
  key: string;
  /** Retries of one request after a 429/5xx that allows it, or a lost connection. */
  retries: number;
  sleep: (ms: number) => Promise<void>;
  /** Told before each wait, so the user sees why nothing moves. */
  onWait?: (message: string) => void;
  timeoutMs?: number;
  /** A server's not_before further away than this is waited for only this long. */
  maxWaitMs?: number;
};

export type SettleClient = {
  url: URL;
  /** Settle's API, typed; every call follows the retry rules above. */
  api: ApiClient;
};

export function parseServerUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url '${raw}' is not a URL (expected e.g. http://localhost:3000)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--url must be http:// or https://, not ${url.protocol}`);
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  url.search = "";
  url.hash = "";
  return url;
}

export function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  return errorEnvelopeSchema.safeParse(body).success;
}

export function describeAnswer(answer: Answer): string {
  return isErrorEnvelope(answer.body)
    ? `HTTP ${answer.status} ${answer.body.code}: ${answer.body.agent_message}`
    : `HTTP ${answer.status}`;
}

const refusedCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** What went wrong underneath fetch's "fetch failed": a socket error code, or the reason fetch gave. */
function networkFailure(error: unknown): { code: string | null; reason: string } {
  const seen = new Set<unknown>();
  let current: unknown = error;
  let reason = "network error";
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown[] };
    if (e.name === "TimeoutError") return { code: "TIMEOUT", reason: "timed out" };
    if (typeof e.message === "string" && e.message !== "fetch failed") reason = e.message;
    if (typeof e.code === "string") return { code: e.code, reason: e.code };
    current = Array.isArray(e.errors) && e.errors.length > 0 ? e.errors[0] : e.cause;
  }
  return { code: null, reason };
}

/** How long to wait before trying again, or null when the answer says not to. */
function retryDelay(answer: Answer, attempt: number, maxWaitMs: number): number | null {
  const { status, body } = answer;
  if (isErrorEnvelope(body)) {
    const { retry } = body;
    if (retry.directive !== "after_delay" || body.next_action === "escalate" || retry.max_attempts_remaining === 0)
      return null;
    const notBefore = retry.not_before ? Date.parse(retry.not_before) : Number.NaN;
    const wait = Number.isNaN(notBefore) ? backoff(attempt) : notBefore - Date.now();
    return Math.min(Math.max(wait, 100), maxWaitMs);
  }
  // A proxy in front of Settle answering without an envelope.
  return status === 502 || status === 503 || status === 504 ? backoff(attempt) : null;
}

const backoff = (attempt: number) => Math.min(500 * 2 ** attempt, 15_000);

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return parseExactJson(text);
  } catch {
    return undefined;
  }
}

export function createSettleClient(options: ClientOptions): SettleClient {
  const { url, key, retries, sleep } = options;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  let answeredBefore = false;

  async function request(
    method: Method,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<Answer> {
    const target = new URL(path.replace(/^\//, ""), url);
    let last = "";
    for (let attempt = 0; attempt <= retries; attempt += 1) {
      let answer: Answer;
      try {
        const res = await fetch(target, {
          method,
          headers: { ...headers, authorization: `Bearer ${key}` },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const parsed = await readBody(res);
        answer = { status: res.status, body: parsed };
        if (parsed === undefined && res.status < 500) {
          throw new CliError(
            `${target.origin} did not answer like Settle (HTTP ${res.status}, ${res.headers.get("content-type") ?? "no content type"}); check --url`,
            EXIT_UNREACHABLE,
          );
        }
      } catch (error) {
        if (error instanceof CliError) throw error;
        const { code, reason } = networkFailure(error);
        // Refused (or not even attempted) before Settle ever answered: nothing
        // was sent, and waiting will not help. Later, the request may have
        // arrived, and sending it again is safe.
        if (!answeredBefore && (code === null || refusedCodes.has(code))) {
          throw new CliError(
            `cannot reach Settle at ${target.origin} (${reason}); is the server running and --url right?`,
            EXIT_UNREACHABLE,
          );
        }
        last = `no answer from ${target.origin} (${reason})`;
        if (attempt === retries) break;
        const wait = backoff(attempt);
        options.onWait?.(
          `${last}; the request may or may not have arrived, sending it again in ${(wait / 1000).toFixed(1)} s`,
        );
        await sleep(wait);
        continue;
      }
      answeredBefore = true;
      if (answer.status === 401 || answer.status === 403) {
        throw new CliError(`Settle refused the key: ${describeAnswer(answer)}`, EXIT_UNREACHABLE);
      }
      const wait = answer.status === 429 || answer.status >= 500 ? retryDelay(answer, attempt, maxWaitMs) : null;
      if (wait === null) return answer;
      last = describeAnswer(answer);
      if (attempt === retries) break;
      options.onWait?.(
        `${last}; waiting ${(wait / 1000).toFixed(1)} s as the server asks, then sending the same request again`,
      );
      await sleep(wait);
    }
    throw new CliError(`gave up after ${retries + 1} attempts: ${last}`, EXIT_UNREACHABLE);
  }

  return {
    url,
    api: createApiClient(({ method, path, headers, body }) => request(method, path, headers, body), {
      writeJson: stringifyExactJson,
    }),
  };
}
