import { request, type HttpOptions } from "./http.js";
import type { Decision } from "./types.js";

// Reading Settle's decision on an invocation (docs/outcome-model.md §5). Waiting uses the
// endpoint's long poll (`?wait=`) with the last ETag, so an unchanged
// decision costs one held request, not a stream of polls.

export type DecisionOptions = {
  /** Longest hold asked of the server per request (Settle holds at most 30 s). */
  pollWaitS: number;
  /** A poll answered sooner than this with nothing new is followed by a pause of this long (a server that does not hold). */
  minPollMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
};

export type AwaitDecisionOptions = {
  /** Milliseconds to wait in all; when they pass, the last decision read is returned, whatever it is. */
  timeout: number;
  /** What counts as reached. Default: anything but `wait`. */
  until?: (decision: Decision) => boolean;
};

const decisionPath = (id: string, waitS: number) =>
  `/api/v1/invocations/${encodeURIComponent(id)}/decision${waitS > 0 ? `?wait=${waitS}` : ""}`;

/** One read; `decision` is null when the server answered 304 (unchanged since `etag`). */
async function readDecision(http: HttpOptions, id: string, waitS: number, etag: string | null) {
  const answer = await request(http, {
    method: "GET",
    path: decisionPath(id, waitS),
    headers: etag ? { "if-none-match": etag } : {},
    timeoutMs: http.timeoutMs + waitS * 1000,
  });
  const decision = answer.status === 304 ? null : (answer.body as Decision);
  return { decision, etag: answer.headers.get("etag") ?? etag };
}

export async function getDecision(http: HttpOptions, id: string): Promise<Decision> {
  const { decision } = await readDecision(http, id, 0, null);
  return decision as Decision;
}

export async function awaitDecision(
  http: HttpOptions,
  options: DecisionOptions,
  id: string,
  wanted: AwaitDecisionOptions,
): Promise<Decision> {
  const until = wanted.until ?? ((d: Decision) => d.decision !== "wait");
  const deadline = options.now() + wanted.timeout;
  let read = await readDecision(http, id, 0, null);
  let current = read.decision as Decision;

  while (!until(current)) {
    const remaining = deadline - options.now();
    if (remaining <= 0) return current;
    const waitS = Math.max(1, Math.min(options.pollWaitS, Math.floor(remaining / 1000)));
    const started = options.now();
    read = await readDecision(http, id, waitS, read.etag);
    if (read.decision) current = read.decision;
    if (until(current)) break;
    if (options.now() - started < options.minPollMs) {
      await options.sleep(Math.min(options.minPollMs, Math.max(0, deadline - options.now())));
    }
  }
  return current;
}
