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

/** A deep copy with NUL replaced and secret-looking keys' values redacted. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new TooDeepError();
  if (typeof value === "string") return SECRET_VALUE.test(value) ? REDACTED : cleanText(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (typeof value === "object" && value !== null) {
    // fromEntries defines own properties, so a key such as "__proto__" is kept as data, not taken for the prototype.
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => [cleanText(key), isSecretKey(key) && v !== null && v !== "" ? REDACTED : redact(v, depth + 1)]),
    );
  }
  return value;
}
