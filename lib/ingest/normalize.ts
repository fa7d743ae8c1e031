import { leafAdapters, normalizeUnrecognized, wrapperAdapters, type AdapterContext } from "./adapters";
import { isRecord } from "./adapters/shared";
import { parseJsonObject } from "./adapters/wrapped-text";
import { cleanText, redact } from "./redact";
import type { NormalizedAttempt, SafeValue } from "./vocabulary";

function normalizeLeaf(value: unknown, ctx: AdapterContext): NormalizedAttempt | null {
  if (!isRecord(value)) return null;
  const adapter = leafAdapters.find((a) => a.detect(value));
  return adapter ? { dialect: adapter.dialect, wrapper_dialect: null, ...adapter.normalize(value, ctx) } : null;
}

function detect(envelope: unknown, ctx: AdapterContext): NormalizedAttempt {
  const value = typeof envelope === "string" ? (parseJsonObject(envelope) ?? envelope) : envelope;
  if (!isRecord(value)) return normalizeUnrecognized(value, ctx);
  const wrapper = wrapperAdapters.find((a) => a.detect(value));
  if (wrapper) {
    // The inner envelope decides; the wrapper's own flag only speaks when there is none.
    for (const candidate of wrapper.inner(value)) {
      const inner = normalizeLeaf(candidate, ctx);
      if (inner) return { ...inner, wrapper_dialect: wrapper.dialect };
    }
    return { dialect: wrapper.dialect, wrapper_dialect: null, ...wrapper.normalize(value, ctx) };
  }
  return normalizeLeaf(value, ctx) ?? normalizeUnrecognized(value, ctx);
}

const nullableText = (v: string | null) => (v === null ? null : cleanText(v));

/** Reads any supported envelope into Settle's outcome model. Pure: no I/O, no clock. */
export function normalizeEnvelope(envelope: unknown, ctx: AdapterContext): NormalizedAttempt {
  const n = detect(envelope, ctx);
  return {
    ...n,
    code: nullableText(n.code),
    agent_message: nullableText(n.agent_message),
    user_message: nullableText(n.user_message),
    safe_details: redact(n.safe_details) as Record<string, SafeValue>,
    items: n.items.map((i) => ({ ...i, item_id: cleanText(i.item_id), reason: nullableText(i.reason) })),
  };
}
