import "server-only";
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import { env } from "../env";
import { describeAnswerBody, printableSnippet, readAtMost, SNIPPET_MAX_CHARS } from "./answer";
import { bodyOf } from "./body";
import type { OtlpOutcome } from "./otlp-outcomes";
import { otlpBodyOf } from "./otlp-span";
import { pinnedPost, type PostFn } from "./pinned-post";
import {
  checkUrlShape,
  checkWebhookUrl,
  describeRule,
  SERVER_PRIVATE_HINT,
  systemLookup,
  type LookupFn,
  type UrlRefusal,
} from "./safe-url";
import { SIGNATURE_HEADER, signatureHeader } from "./signature";

// Sends what the outbox holds. A delivery is claimed by setting a lease
// (locked_until) in a short transaction, then POSTed outside any transaction:
// no connection waits on a slow receiver. Another instance skips leased rows;
// if this instance dies mid-send, the lease runs out and the row is due again
// (delivery is at-least-once: receivers de-duplicate by Settle-Event-Id).

export const BACKOFF_BASE_S = 30;
export const BACKOFF_CAP_S = 6 * 60 * 60;
/** How much longer than the POST timeout a claim is held, for the writes around it. */
const LEASE_MARGIN_MS = 60_000;

/** ±20%, so that deliveries that failed together do not all retry in the same second. */
export function jitterFactor(random: () => number = Math.random): number {
  return 0.8 + 0.4 * random();
}

/** The wait after the n-th failed try: base·2^(n-1), at most the cap, times the jitter (recordTry computes the same in SQL). */
export function backoffMs(failedTries: number, jitter = jitterFactor()): number {
  return Math.round(Math.min(BACKOFF_BASE_S * 2 ** Math.max(0, failedTries - 1), BACKOFF_CAP_S) * 1000 * jitter);
}

type Claimed = {
  id: string;
  event_id: string;
  event_type: string;
  payload: unknown;
  attempts: number;
  url: string | null;
  secret: string;
  /** The endpoint's kind (`otlp`: the payload is an outcome sent as a span) and, for otlp, its headers. */
  kind: string | null;
  headers: Record<string, string> | null;
  /** A notification channel's message (lib/notifications): its kind and, for email, the recipients. */
  channel_kind: string | null;
  email_to: string[] | null;
};

// A delivery goes to a runtime's endpoint or to a notification channel: whichever it names must be enabled.
const CLAIM = `
  WITH due AS (
    SELECT d.id FROM webhook_deliveries d
      LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
      LEFT JOIN notification_channels c ON c.id = d.channel_id
     WHERE d.status = 'pending' AND d.next_attempt_at <= $1::timestamptz
       AND (d.locked_until IS NULL OR d.locked_until <= $1::timestamptz)
       AND (e.enabled OR c.enabled)
     ORDER BY d.next_attempt_at
     LIMIT $2
     FOR UPDATE OF d SKIP LOCKED
  ),
  claimed AS (
    UPDATE webhook_deliveries d SET locked_until = $3::timestamptz
      FROM due WHERE d.id = due.id
    RETURNING d.id, d.endpoint_id, d.channel_id, d.event_id, d.event_type, d.payload, d.attempts
  )
  SELECT d.id::text AS id, d.event_id, d.event_type, d.payload, d.attempts,
         COALESCE(e.url, c.url) AS url, COALESCE(e.secret, c.secret) AS secret, c.kind AS channel_kind, c.email_to,
         e.kind, e.headers
    FROM claimed d
    LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
    LEFT JOIN notification_channels c ON c.id = d.channel_id`;

export type TryResult = { statusCode: number | null; error: string | null; durationMs: number; delivered: boolean };

export type { PostFn } from "./pinned-post";

/** A notification channel's message to send: its kind, recipients (email) and the payload as queued. */
export type ChannelMessage = { kind: string; to: readonly string[]; payload: unknown };
/**
 * Sends a channel's message (lib/notifications gives it): `post` sends a body to the channel's URL the way
 * every webhook is sent (checked address, signed, bounded answer).
 */
export type ChannelSender = (
  message: ChannelMessage,
  post: (body: string) => Promise<TryResult>,
  /** The try's time: what the message says of ages is said as of its sending, not of its composing. */
  now: Date,
) => Promise<TryResult>;

/**
 * What a receiver's 2xx answer to an event type means, when it means something: a verification request's
 * answer may carry the finding (lib/verify). Given the event as queued and the answer's first bytes as text.
 */
export type AnswerReaders = Partial<Record<string, (payload: unknown, text: string) => Promise<void>>>;
/** How much of a 2xx answer an answer reader gets: a finding's evidence is at most 4 KiB, plus its JSON. */
const ANSWER_READ_BYTES = 16 * 1024;

type Sender = {
  timeoutMs: number;
  post: PostFn;
  lookup: LookupFn;
  allowPrivate: boolean;
  answers: AnswerReaders;
  channels: ChannelSender | null;
};

/** A lookup that gives up with the try: getaddrinfo has no timeout of its own. */
function boundedLookup(lookup: LookupFn, signal: AbortSignal): LookupFn {
  return (host) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(Object.assign(new Error("DNS lookup timed out"), { code: "ETIMEOUT" }));
      signal.addEventListener(
        "abort",
        () => reject(Object.assign(new Error("DNS lookup timed out"), { code: "ETIMEOUT" })),
        { once: true },
      );
      lookup(host).then(resolve, reject);
    });
}

function refusalText(refusal: UrlRefusal, host: string | null): string {
  // The hint after the (bounded) refusal, so a long host name never cuts it off.
  if ("address" in refusal)
    return `${printableSnippet(
      `refused: ${host ? `${host} resolves to ` : ""}${describeRule(refusal.rule)} (${refusal.address})`,
    )}; ${SERVER_PRIVATE_HINT}`;
  // A name that does not resolve now may resolve at the next try: a failure, not a refusal.
  if (refusal.rule === "unresolvable") return printableSnippet(`DNS: the URL ${refusal.message}`);
  // A local name's refusal carries the hint already (safe-url.ts); it is short.
  return printableSnippet(`refused: the URL ${refusal.message}`, SNIPPET_MAX_CHARS + SERVER_PRIVATE_HINT.length);
}

function hostOf(url: string): string | null {
  const shape = checkUrlShape(url);
  return shape.ok && shape.literal === null ? shape.host : null;
}

/** What one try sends: a signed JSON event, or an OTLP export with the endpoint's own headers. */
type Request = { body: string | Uint8Array; headers: Record<string, string> };

function eventRequest(delivery: Claimed, now: Date, body: string): Request {
  return {
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "Settle-Webhooks/1",
      [SIGNATURE_HEADER]: signatureHeader(delivery.secret, body, now),
      "Settle-Event-Id": delivery.event_id,
      "Settle-Event-Type": delivery.event_type,
    },
  };
}

function otlpRequest(delivery: Claimed): Request {
  return {
    body: otlpBodyOf(delivery.payload as OtlpOutcome),
    // The endpoint's headers first: the ones that say what the body is are Settle's.
    headers: { ...delivery.headers, "content-type": "application/x-protobuf", "user-agent": "Settle-OTLP/1" },
  };
}

async function postOnce(delivery: Claimed & { url: string }, sender: Sender, request: Request): Promise<TryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(sender.timeoutMs);
  // Checked again at every try, on the addresses the name has now: it may have changed since it was saved.
  const target = await checkWebhookUrl(delivery.url, {
    allowPrivate: sender.allowPrivate,
    lookup: boundedLookup(sender.lookup, signal),
  });
  if (!target.ok)
    return {
      statusCode: null,
      error: refusalText(target, hostOf(delivery.url)),
      durationMs: elapsed(),
      delivered: false,
    };
  try {
    const res = await sender.post(delivery.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      // A redirect is not a delivery: the receiver must answer 2xx at the URL it gave.
      redirect: "manual",
      signal,
      address: target.addresses[0]!,
    });
    const ok = res.status >= 200 && res.status < 300;
    if (ok) {
      const reader = sender.answers[delivery.event_type];
      if (reader && res.body) {
        const text = new TextDecoder().decode(await readAtMost(res.body, ANSWER_READ_BYTES));
        // The delivery succeeded whatever the answer says; a finding Settle cannot use is the reader's to log.
        await reader(delivery.payload, text).catch(() => {});
      } else {
        await res.body?.cancel().catch(() => {});
      }
      return { statusCode: res.status, error: null, durationMs: elapsed(), delivered: true };
    }
    const head = `HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}`;
    // The whole logged line, answer included, stays within SNIPPET_MAX_CHARS.
    const text = await describeAnswerBody(res, SNIPPET_MAX_CHARS - head.length - 2);
    return { statusCode: res.status, error: text ? `${head}: ${text}` : head, durationMs: elapsed(), delivered: false };
  } catch (error) {
    return {
      statusCode: null,
      error: describeFailure(error, sender.timeoutMs),
      durationMs: elapsed(),
      delivered: false,
    };
  }
}

const notSent = (error: string): TryResult => ({ statusCode: null, error, durationMs: 0, delivered: false });

/** One try of a delivery: an endpoint's event as it was queued, or a channel's message as its sender renders it. */
async function tryOnce(delivery: Claimed, now: Date, sender: Sender): Promise<TryResult> {
  const withUrl = (url: string | null) => ({ ...delivery, url: url ?? "" });
  if (delivery.kind === "otlp") {
    let request: Request;
    try {
      request = otlpRequest(delivery);
    } catch (error) {
      return notSent(
        printableSnippet(`The span could not be made: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
    return postOnce(withUrl(delivery.url), sender, request);
  }
  if (delivery.channel_kind === null)
    return postOnce(withUrl(delivery.url), sender, eventRequest(delivery, now, bodyOf(delivery.payload)));
  if (!sender.channels) return notSent("This process does not send notification messages.");
  return sender.channels(
    { kind: delivery.channel_kind, to: delivery.email_to ?? [], payload: delivery.payload },
    (body) =>
      delivery.url
        ? postOnce(withUrl(delivery.url), sender, eventRequest(delivery, now, body))
        : Promise.resolve(notSent("No URL.")),
    now,
  );
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
    return `No answer within ${timeoutMs} ms.`;
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  const code = (error as { code?: unknown } | null)?.code;
  const message =
    cause?.code ??
    cause?.message ??
    (typeof code === "string" ? code : undefined) ??
    (error instanceof Error ? error.message : String(error));
  return printableSnippet(message);
}

/**
 * Writes one try's outcome, and moves the delivery on only if this instance
 * still holds its claim. The next state is computed from the row as it is now
 * (a Resend during the try has reset its attempts), hence in SQL.
 */
async function recordTry(
  db: Db,
  delivery: Claimed,
  lease: string,
  at: Date,
  result: TryResult,
  maxAttempts: number,
): Promise<string> {
  const delivered = result.delivered;
  const jitter = jitterFactor();
  return db.driver.transaction(async (tx) => {
    await tx.query(
      // The endpoint (and with it the delivery) may have been deleted during the try: then there is nothing to log.
      `INSERT INTO webhook_attempts (id, delivery_id, at, status_code, error, duration_ms)
       SELECT $1::uuid, id, $3::timestamptz, $4::int, $5::text, $6::int FROM webhook_deliveries WHERE id = $2::uuid`,
      [randomUUID(), delivery.id, at.toISOString(), result.statusCode, result.error, result.durationMs],
    );
    const moved = await tx.query<{ status: string }>(
      `UPDATE webhook_deliveries
          SET status = CASE WHEN $3::boolean THEN 'delivered' WHEN attempts + 1 >= $4::int THEN 'failed' ELSE 'pending' END,
              next_attempt_at = CASE WHEN $3::boolean OR attempts + 1 >= $4::int THEN next_attempt_at
                ELSE $5::timestamptz + make_interval(secs => LEAST($6::float8 * power(2, attempts), $7::float8) * $8::float8) END,
              attempts = attempts + 1, locked_until = NULL, last_status_code = $9::int, last_error = $10::text,
              delivered_at = CASE WHEN $3::boolean THEN $5::timestamptz ELSE delivered_at END
        WHERE id = $1::uuid AND locked_until = $2::timestamptz
        RETURNING status`,
      [
        delivery.id,
        lease,
        delivered,
        maxAttempts,
        at.toISOString(),
        BACKOFF_BASE_S,
        BACKOFF_CAP_S,
        jitter,
        result.statusCode,
        result.error,
      ],
    );
    // Lost the claim (the lease ran out and another instance took it over): the try is logged, the state is theirs.
    return moved[0]?.status ?? "superseded";
  });
}

export type DeliverResult = { tried: number; delivered: number; retrying: number; failed: number };

export type DeliverOptions = {
  batch?: number;
  maxBatches?: number;
  timeoutMs?: number;
  maxAttempts?: number;
  post?: PostFn;
  /** How host names are resolved before each try (tests answer for the DNS). */
  lookup?: LookupFn;
  /** Overrides SETTLE_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate?: boolean;
  /** Readers of 2xx answers by event type (see AnswerReaders). */
  answers?: AnswerReaders;
  /** Sends notification channels' messages; without it they wait (and fail their tries) here. */
  channels?: ChannelSender;
};

/**
 * Sends every due delivery, `batch` at a time in parallel. `now` is the job's
 * clock; it moves on with real time between batches, so a long run's later
 * claims get leases that really are long enough.
 */
export async function deliverDue(db: Db, now: Date, options: DeliverOptions = {}): Promise<DeliverResult> {
  const settings = env();
  const timeoutMs = options.timeoutMs ?? settings.SETTLE_WEBHOOK_TIMEOUT_MS;
  const maxAttempts = options.maxAttempts ?? settings.SETTLE_WEBHOOK_MAX_ATTEMPTS;
  const batch = options.batch ?? 20;
  const sender: Sender = {
    timeoutMs,
    post: options.post ?? pinnedPost,
    lookup: options.lookup ?? systemLookup,
    allowPrivate: options.allowPrivate ?? settings.SETTLE_WEBHOOK_ALLOW_PRIVATE,
    answers: options.answers ?? {},
    channels: options.channels ?? null,
  };
  const startedAt = Date.now();
  const clock = () => new Date(now.getTime() + (Date.now() - startedAt));
  const total: DeliverResult = { tried: 0, delivered: 0, retrying: 0, failed: 0 };
  for (let i = 0; i < (options.maxBatches ?? 5); i++) {
    // The first batch runs at the job's time exactly; later ones as much later as the earlier took.
    const at = i === 0 ? now : clock();
    const lease = new Date(at.getTime() + timeoutMs + LEASE_MARGIN_MS).toISOString();
    const claimed = await db.driver.query<Claimed>(CLAIM, [at.toISOString(), batch, lease]);
    if (claimed.length === 0) break;
    const outcomes = await Promise.all(
      claimed.map(async (delivery) =>
        recordTry(db, delivery, lease, at, await tryOnce(delivery, at, sender), maxAttempts),
      ),
    );
    total.tried += outcomes.length;
    for (const status of outcomes) {
      if (status === "delivered") total.delivered++;
      else if (status === "failed") total.failed++;
      else if (status === "pending") total.retrying++;
    }
    if (claimed.length < batch) break;
  }
  return total;
}
