import { leafAdapters, normalizeUnrecognized, wrapperAdapters, type AdapterContext } from "./adapters";
import { isRecord } from "./adapters/shared";
import { parseJsonObject } from "./adapters/wrapped-text";
import { storableCount } from "../db/storable";
import { CALLER_TIME_RANGE, callerTimeIso } from "../outcome/record-fields";
import type { IgnoredHint } from "../outcome/vocabulary";
import { cleanText, redact, redactText } from "../redact/redact";
import type { NormalizedAttempt, Retry, SafeValue } from "../outcome/vocabulary";

function normalizeLeaf(value: unknown, ctx: AdapterContext): NormalizedAttempt | null {
  if (!isRecord(value)) return null;
  const adapter = leafAdapters.find((a) => a.detect(value));
  return adapter
    ? Object.assign({ dialect: adapter.dialect, wrapper_dialect: null }, adapter.normalize(value, ctx))
    : null;
}

function detect(envelope: unknown, ctx: AdapterContext): NormalizedAttempt {
  const value = typeof envelope === "string" ? (parseJsonObject(envelope) ?? envelope) : envelope;
  if (!isRecord(value)) return normalizeUnrecognized(value, ctx);
  const wrapper = wrapperAdapters.find((a) => a.detect(value));
  if (wrapper) {
    // The inner envelope decides; the wrapper's own flag only speaks when there is none.
    for (const candidate of wrapper.inner(value)) {
      const inner = normalizeLeaf(candidate, ctx);
      if (inner) return Object.assign(inner, { wrapper_dialect: wrapper.dialect });
    }
    return Object.assign({ dialect: wrapper.dialect, wrapper_dialect: null }, wrapper.normalize(value, ctx));
  }
  return normalizeLeaf(value, ctx) ?? normalizeUnrecognized(value, ctx);
}

/** Would normalizeEnvelope read this value as a known dialect (not `unrecognized`)? Cheap: detection only, nothing is copied. */
export function isKnownEnvelope(value: unknown): boolean {
  return isRecord(value) && (wrapperAdapters.some((a) => a.detect(value)) || leafAdapters.some((a) => a.detect(value)));
}

// A joined or cut message can form what no single part held (a scheme at the end of one part, a token at the start of the next).
const nullableText = (v: string | null) => (v === null ? null : redactText(v));

/** Whatever an adapter read, the stored retry hints are ones PostgreSQL holds; the rest is ignored, not fatal. */
function storableRetry(retry: Retry, ignored: IgnoredHint[]): Retry {
  const notBefore = retry.not_before === null ? null : callerTimeIso(Date.parse(retry.not_before));
  if (retry.not_before !== null && notBefore === null)
    ignored.push({ field: "retry.not_before", reason: `outside the times Settle takes, ${CALLER_TIME_RANGE}` });
  const max = retry.max_attempts_remaining;
  const storableMax = max === null || storableCount(max);
  if (!storableMax)
    ignored.push({ field: "retry.max_attempts_remaining", reason: "not a whole number from 0 to 2147483647" });
  return { directive: retry.directive, not_before: notBefore, max_attempts_remaining: storableMax ? max : null };
}

/**
 * Reads any supported envelope into Settle's outcome model. Pure: no I/O, no
 * clock. The envelope is redacted first, so no field read from it (a message
 * taken from a text part, a detail, an item's reason) can carry a secret.
 * Throws TooDeepError for an envelope nested deeper than redact() walks.
 */
export function normalizeEnvelope(envelope: unknown, ctx: AdapterContext): NormalizedAttempt {
  return normalizeRedactedEnvelope(redact(envelope), ctx);
}

/** normalizeEnvelope for an envelope that redact() returned (the stored one), which needs no second walk. */
export function normalizeRedactedEnvelope(envelope: unknown, ctx: AdapterContext): NormalizedAttempt {
  const n = detect(envelope, ctx);
  const ignored = [...(n.ignored ?? [])];
  const retry = storableRetry(n.retry, ignored);
  // Every field named, no spreads: this runs for every record, and V8 copies spread-built objects slowly.
  const out: NormalizedAttempt = {
    dialect: n.dialect,
    wrapper_dialect: n.wrapper_dialect,
    outcome: n.outcome,
    commit_state: n.commit_state,
    code: nullableText(n.code),
    category: n.category,
    retry,
    next_action: n.next_action,
    dispatch_stage: n.dispatch_stage,
    // A handful of flat values: a second pass costs little, and holds for any detail an adapter composes.
    safe_details: redact(n.safe_details) as Record<string, SafeValue>,
    agent_message: nullableText(n.agent_message),
    user_message: nullableText(n.user_message),
    items: n.items.map((i) => ({ item_id: cleanText(i.item_id), applied: i.applied, reason: nullableText(i.reason) })),
  };
  if (ignored.length > 0) out.ignored = ignored;
  return out;
}
