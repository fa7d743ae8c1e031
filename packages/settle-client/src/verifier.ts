import { SettleError } from "./errors.js";
import { stringifyExactJson } from "./exact-json.js";
import { request, type HttpOptions } from "./http.js";
import type { EffectClass } from "./types.js";

// Verifiers: when a call of a tool whose catalog entry has `verify` becomes unknown, Settle asks the runtime
// whether the effect exists. A verifier is the read that answers it (list refunds by the idempotency key), and
// `serveVerifications` is the worker loop that takes Settle's asks (a long poll; each ask is leased to this
// worker) and answers them. A verifier that throws or does not answer in time answers "could not tell", so
// Settle asks again later; it never guesses.

export type VerificationItem = {
  /** The ask's id: the answer goes to POST /api/v1/verifications/{id}. */
  id: string;
  invocation_id: string;
  task_id: string;
  tool: string;
  effect_class: EffectClass | null;
  idempotency_key: string | null;
  /** The call's latest arguments, secrets redacted (an integer past 2^53 a `bigint`); null when none were sent. */
  arguments: Record<string, unknown> | null;
  /** When Settle first saw the call: "not found" counts only once it is the entry's absent_after_s old. */
  first_dispatched_at: string;
  /** This ask's number, from 1. */
  try: number;
  max_tries: number;
  /** Answer before this, or the ask may go to another worker. */
  lease_expires_at: string;
};

/** true: the effect exists; false: it does not; null: the lookup could not tell (Settle asks again). */
export type Finding = { found: boolean | null; evidence?: string | null; ref?: string | null };
export type Verifier = (item: VerificationItem) => Promise<Finding> | Finding;

export type VerificationAnswer = {
  id: string;
  invocation_id: string;
  state: "settled" | "open" | "gave_up" | "cancelled";
  reading: "found" | "absent" | "ask_again" | "give_up" | "recorded";
  next_ask_at: string | null;
};

/** One answer of a batch: the result, or why Settle refused that answer (the others are unaffected). */
export type BatchAnswerResult = VerificationAnswer | { id: string; error: { code: string; message: string } };

export type TakeOptions = { waitS?: number; limit?: number; worker?: string; signal?: AbortSignal };

export type ServeOptions = {
  /** Stops the loop; an ask in flight is abandoned (its lease runs out and Settle asks again). */
  signal?: AbortSignal;
  /** Long poll hold, 0–60 s. Default 30. */
  waitS?: number;
  /** Asks worked on at once, at most 20 (what one poll may take). Default 4. */
  concurrency?: number;
  /** How long a verifier may take before its ask is answered "could not tell". Default 20 s. */
  timeoutMs?: number;
  /** A name for this worker, shown on the invocation page while it holds an ask. */
  worker?: string;
  /** Told about asks answered and problems met; default: console.warn for problems only. */
  log?: (event: ServeEvent) => void;
};

export type ServeEvent =
  | { kind: "answered"; item: VerificationItem; finding: Finding; answer: VerificationAnswer }
  | { kind: "answer_refused"; item: VerificationItem; error: SettleError }
  | { kind: "poll_failed"; error: unknown; retryInMs: number };

const EVIDENCE_MAX = 4096;
// Settle hands out at most 20 asks per poll: a larger concurrency takes 20 at a time.
const TAKE_MAX = 20;
// Settle takes up to 100 answers and 64 KiB in one request; a batch is cut below both.
const BATCH_MAX = 100;
const BATCH_BYTES = 48 * 1024;
// Answers finished this close together go in one request.
const LINGER_MS = 10;
const utf8 = new TextEncoder();
const BACKOFF_CAP_MS = 30_000;

/** `*` stands for any characters, as in Settle's tool catalog. */
function matches(pattern: string, tool: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === tool;
  let at = 0;
  for (const [i, part] of parts.entries()) {
    if (i === 0) {
      if (!tool.startsWith(part)) return false;
      at = part.length;
    } else if (i === parts.length - 1) {
      return tool.length - part.length >= at && tool.endsWith(part);
    } else {
      const found = tool.indexOf(part, at);
      if (found < 0) return false;
      at = found + part.length;
    }
  }
  return true;
}

/** The most specific registered verifier: an exact name first, then the pattern with more literal characters. */
export function verifierFor(registered: ReadonlyMap<string, Verifier>, tool: string): Verifier | null {
  const exact = registered.get(tool);
  if (exact) return exact;
  let best: [string, Verifier] | null = null;
  for (const [pattern, fn] of registered) {
    if (!pattern.includes("*") || !matches(pattern, tool)) continue;
    const literal = pattern.replaceAll("*", "").length;
    if (!best || literal > best[0].replaceAll("*", "").length) best = [pattern, fn];
  }
  return best?.[1] ?? null;
}

const clip = (text: string) => (text.length > EVIDENCE_MAX ? `${text.slice(0, EVIDENCE_MAX - 1)}…` : text);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function runVerifier(fn: Verifier | null, item: VerificationItem, timeoutMs: number): Promise<Finding> {
  if (!fn) return { found: null, evidence: `no verifier registered for ${item.tool} in this worker` };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Finding>((resolve) => {
    timer = setTimeout(
      () => resolve({ found: null, evidence: `the verifier took longer than ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  try {
    const finding = await Promise.race([Promise.resolve().then(() => fn(item)), timeout]);
    if (finding === null || typeof finding !== "object" || !("found" in finding))
      return { found: null, evidence: "the verifier answered without `found`" };
    return {
      found: finding.found,
      evidence: finding.evidence ? clip(finding.evidence) : null,
      ref: finding.ref ?? null,
    };
  } catch (error) {
    return { found: null, evidence: clip(`the verifier failed: ${messageOf(error)}`) };
  } finally {
    clearTimeout(timer);
  }
}

export type Verifiers = {
  verifier: (tool: string, fn: Verifier) => void;
  takeVerifications: (options?: TakeOptions) => Promise<VerificationItem[]>;
  answerVerification: (id: string, finding: Finding) => Promise<VerificationAnswer>;
  answerVerifications: (answers: ReadonlyArray<{ id: string } & Finding>) => Promise<BatchAnswerResult[]>;
  serveVerifications: (options?: ServeOptions) => Promise<void>;
};

export function createVerifiers(http: HttpOptions): Verifiers {
  const registered = new Map<string, Verifier>();

  const takeVerifications = async ({ waitS = 0, limit = 10, worker, signal }: TakeOptions = {}) => {
    const query = new URLSearchParams({ wait: String(waitS), limit: String(limit) });
    if (worker) query.set("worker", worker);
    const answer = await request(http, {
      method: "GET",
      path: `/api/v1/verifications?${query}`,
      timeoutMs: http.timeoutMs + waitS * 1000,
      signal,
    });
    return ((answer.body as { items?: VerificationItem[] }).items ?? []) as VerificationItem[];
  };

  const answerVerification = async (id: string, finding: Finding) =>
    (
      await request(http, {
        method: "POST",
        path: `/api/v1/verifications/${encodeURIComponent(id)}`,
        body: { found: finding.found, evidence: finding.evidence ?? null, ref: finding.ref ?? null },
      })
    ).body as VerificationAnswer;

  const answerVerifications = async (answers: ReadonlyArray<{ id: string } & Finding>) =>
    (
      (
        await request(http, {
          method: "POST",
          path: "/api/v1/verifications",
          body: {
            answers: answers.map((a) => ({
              id: a.id,
              found: a.found,
              evidence: a.evidence ?? null,
              ref: a.ref ?? null,
            })),
          },
        })
      ).body as { results: BatchAnswerResult[] }
    ).results;

  const serveVerifications = async (options: ServeOptions = {}) => {
    const { signal, waitS = 30, concurrency = 4, timeoutMs = 20_000, worker } = options;
    const log =
      options.log ??
      ((event: ServeEvent) => {
        if (event.kind === "answer_refused")
          console.warn(`settle: answer to ${event.item.id} refused: ${event.error.message}`);
        if (event.kind === "poll_failed")
          console.warn(`settle: asking for work failed (${messageOf(event.error)}); again in ${event.retryInMs} ms`);
      });
    let failures = 0;
    while (!signal?.aborted) {
      let items: VerificationItem[];
      try {
        items = await takeVerifications({ waitS, limit: Math.min(concurrency, TAKE_MAX), worker, signal });
        failures = 0;
      } catch (error) {
        if (signal?.aborted) return;
        // A wrong or revoked key, or a request Settle refuses as malformed, will not heal by waiting: stop and say so.
        if (error instanceof SettleError && [400, 401, 403].includes(error.status)) throw error;
        failures += 1;
        const retryInMs = Math.round(Math.min(500 * 2 ** (failures - 1), BACKOFF_CAP_MS) * (0.8 + 0.4 * Math.random()));
        log({ kind: "poll_failed", error, retryInMs });
        await pause(retryInMs, signal);
        continue;
      }
      const flusher = answerFlusher(answerVerifications, log);
      await Promise.all(
        items.map(async (item) => {
          const finding = await runVerifier(verifierFor(registered, item.tool), item, timeoutMs);
          if (!signal?.aborted) flusher.add(item, finding);
        }),
      );
      await flusher.drain();
    }
  };

  return {
    verifier: (tool, fn) => {
      registered.set(tool, fn);
    },
    takeVerifications,
    answerVerification,
    answerVerifications,
    serveVerifications,
  };
}

type Answered = { item: VerificationItem; finding: Finding };

/**
 * Findings are sent as they finish, those finishing within LINGER_MS of each other in one request (cut at
 * BATCH_MAX answers or BATCH_BYTES), so a busy worker costs Settle one request per batch, not per ask.
 */
function answerFlusher(
  send: (answers: ReadonlyArray<{ id: string } & Finding>) => Promise<BatchAnswerResult[]>,
  log: (event: ServeEvent) => void,
) {
  let waiting: Answered[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const inFlight: Array<Promise<void>> = [];

  const sendBatch = async (batch: Answered[]) => {
    try {
      const results = await send(batch.map(({ item, finding }) => ({ id: item.id, ...finding })));
      batch.forEach(({ item, finding }, i) => {
        const result = results[i];
        if (result && "error" in result) {
          const error = new SettleError(result.error.message, { status: 409, code: result.error.code });
          log({ kind: "answer_refused", item, error });
        } else if (result) log({ kind: "answered", item, finding, answer: result });
      });
    } catch (error) {
      // The whole request was refused: each ask's lease runs out and Settle asks again.
      if (!(error instanceof SettleError)) throw error;
      for (const { item } of batch) log({ kind: "answer_refused", item, error });
    }
  };
  const flush = () => {
    timer = undefined;
    while (waiting.length > 0) {
      const batch: Answered[] = [];
      let bytes = 0;
      while (waiting.length > 0 && batch.length < BATCH_MAX) {
        const size = utf8.encode(stringifyExactJson(waiting[0]!.finding)).length + 64;
        if (batch.length > 0 && bytes + size > BATCH_BYTES) break;
        bytes += size;
        batch.push(waiting.shift()!);
      }
      inFlight.push(sendBatch(batch));
    }
  };
  return {
    add(item: VerificationItem, finding: Finding) {
      waiting.push({ item, finding });
      timer ??= setTimeout(flush, LINGER_MS);
    },
    async drain() {
      clearTimeout(timer);
      flush();
      await Promise.all(inFlight);
      waiting = [];
    },
  };
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
