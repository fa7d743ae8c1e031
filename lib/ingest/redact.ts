// Upstream text is untrusted data: kept verbatim, minus what PostgreSQL cannot
// store (NUL) and what must never be stored (secrets under tell-tale keys).

export const REDACTED = "[redacted]";

const SECRET_KEY =
  /(token|secret|passw|passphrase|authorization|api[-_]?key|apikey|cookie|credential|private[-_]?key|access[-_]?key|session[-_]?id|bearer|signature|cvv|card[-_]?number)/i;
const SECRET_VALUE = /^\s*(bearer|basic)\s+\S+/i;

export const MAX_DEPTH = 64;

export class TooDeepError extends Error {
  constructor() {
    super(`nested deeper than ${MAX_DEPTH} levels`);
  }
}

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** NUL and lone surrogates, which PostgreSQL cannot store, become U+FFFD. */
export function cleanText(value: string): string {
  const wellFormed = value.toWellFormed();
  return wellFormed.includes("\u0000") ? wellFormed.replaceAll("\u0000", "\uFFFD") : wellFormed;
}

/**
 * The value with NUL replaced and secret-looking keys' values redacted. What
 * needs no change is returned as it is (most envelopes): only a part with
 * something to change is copied, so a clean envelope costs a walk, no copy.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new TooDeepError();
  if (typeof value === "string") return SECRET_VALUE.test(value) ? REDACTED : cleanText(value);
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i += 1) {
      const v: unknown = value[i];
      const r = redact(v, depth + 1);
      if (r !== v && out === null) out = value.slice(0, i);
      out?.push(r);
    }
    return out ?? value;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    let changed = false;
    const redacted = entries.map(([key, v]) => {
      const k = cleanText(key);
      const r = isSecretKey(key) && v !== null && v !== "" ? REDACTED : redact(v, depth + 1);
      if (k !== key || r !== v) changed = true;
      return [k, r] as const;
    });
    // fromEntries defines own properties, so a key such as "__proto__" is kept as data, not taken for the prototype.
    return changed || Object.getPrototypeOf(value) !== Object.prototype ? Object.fromEntries(redacted) : value;
  }
  return value;
}
