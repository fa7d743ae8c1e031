import { MAY_HOLD_SECRET, REDACTED, redactSecretsInText } from "./secret-patterns";
import { isPairNameField, isPairValueField, isSecretKey, mayNameSecret } from "./secret-keys";
import { parseExactJson, stringifyExactJson } from "../json/exact";

// Upstream text is untrusted data: kept verbatim, minus what PostgreSQL cannot
// store (NUL) and what must never be stored. One rule set, for arguments,
// envelopes, a verifier's evidence and the audit trail alike:
// - a value under a secret-looking key (secret-keys.ts: `password`, `Pass_Word`,
//   `pwd`, a Cyrillic look-alike), at any depth;
// - the value of a name/value pair whose name is one (`{name: "X-Api-Key",
//   value: …}`, Kubernetes' `env: [{name: "DB_PASSWORD", value: …}]`, a list of
//   `["Authorization", "Bearer …"]` header pairs);
// - credentials recognisable by their shape anywhere in a text, and the value
//   of `password=…` / `DB_PASSWORD: …` in it (secret-patterns.ts);
// - all of those inside a text that is itself JSON (an MCP or Anthropic text part).

export { REDACTED, isSecretKey };

export const MAX_DEPTH = 64;

/** Longer texts are not parsed as JSON, only read for members and patterns: parsing is paid per string, on the hot path. */
export const MAX_JSON_TEXT = 64 * 1024;

export class TooDeepError extends Error {
  constructor() {
    super(`nested deeper than ${MAX_DEPTH} levels`);
  }
}

/** NUL and lone surrogates, which PostgreSQL cannot store, become U+FFFD. */
export function cleanText(value: string): string {
  const wellFormed = value.toWellFormed();
  return wellFormed.includes("\u0000") ? wellFormed.replaceAll("\u0000", "\uFFFD") : wellFormed;
}

function looksLikeJson(value: string): boolean {
  if (value.length < 2) return false;
  const first = value.charCodeAt(0);
  if (first === 0x7b || first === 0x5b) return true;
  return /^\s+[[{]/.test(value);
}

function parseJson(value: string): unknown {
  if (value.length > MAX_JSON_TEXT) return undefined;
  try {
    // Exactly: a text written back after a redaction keeps every digit of its long integers (lib/json).
    return parseExactJson(value);
  } catch {
    return undefined;
  }
}

/** Index of the quote that closes the JSON string opened at `open`, or -1 when the text ends first. */
function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i += 1;
    else if (c === 0x22) return i;
  }
  return -1;
}

const isJsonSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isScalarChar = (c: string | undefined) => c !== undefined && /[-+.\w]/.test(c);

function unescapeJson(key: string): string {
  try {
    return JSON.parse(`"${key}"`) as string;
  } catch {
    return key;
  }
}

/**
 * The key rule, read off the text, for JSON that cannot be parsed: cut short
 * (a truncated tool output) or too long. A scan, not a regex: one pass reads
 * each string once, closed or not, where a regex would read an unclosed
 * string again from every quote in it.
 */
function redactJsonMembers(text: string): string {
  let out = "";
  let copied = 0;
  let open = text.indexOf('"');
  while (open >= 0) {
    const close = closingQuote(text, open);
    if (close < 0) break;
    let at = close + 1;
    while (isJsonSpace(text.charCodeAt(at))) at += 1;
    if (text[at] !== ":") {
      open = text.indexOf('"', close + 1);
      continue;
    }
    at += 1;
    while (isJsonSpace(text.charCodeAt(at))) at += 1;
    let end = at;
    if (text[at] === '"') {
      const valueClose = closingQuote(text, at);
      // A value cut off before its closing quote is redacted to the end of the text.
      end = valueClose < 0 ? text.length : valueClose + 1;
    } else {
      while (isScalarChar(text[end])) end += 1;
    }
    const key = text.slice(open + 1, close);
    const value = text.slice(at, end);
    if (
      value !== "" &&
      value !== '""' &&
      value !== "null" &&
      isSecretKey(key.includes("\\") ? unescapeJson(key) : key)
    ) {
      out += `${text.slice(copied, at)}"${REDACTED}"`;
      copied = end;
    }
    open = text.indexOf('"', text[at] === '"' ? end : at);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A text that is JSON, redacted as JSON (every rule, pairs included); without the members' rule when it does not parse. */
function redactJsonText(value: string, depth: number): string {
  const parsed = parseJson(value);
  if (parsed !== undefined) {
    try {
      const r = redact(parsed, depth + 1);
      // Unchanged, the text is kept byte for byte (its spacing, its key order, its escapes).
      return r === parsed ? value : stringifyExactJson(r);
    } catch (error) {
      // Too deep to read as JSON is no reason to refuse what is, after all, a string: it is read as text.
      if (!(error instanceof TooDeepError)) throw error;
    }
  }
  return redactJsonMembers(value);
}

/** JSON inside prose (`timed out: [{"name": "X-Api-Key", …}]`): from the first bracket to the last, read as JSON. */
function redactEmbeddedJson(text: string, depth: number): string {
  const open = text.search(/[[{]/);
  if (open < 0) return text;
  const close = Math.max(text.lastIndexOf("}"), text.lastIndexOf("]"));
  if (close <= open) return text;
  const inner = text.slice(open, close + 1);
  const redacted = redactJsonText(inner, depth);
  return redacted === inner ? text : `${text.slice(0, open)}${redacted}${text.slice(close + 1)}`;
}

function redactString(value: string, depth: number): string {
  // Without a backslash (no escape can hide a character) and with none of the markers and key words
  // in the raw text, nothing inside the JSON would be redacted: it is not parsed.
  if (!(value.includes("\\") || mayNameSecret(value) || MAY_HOLD_SECRET.test(value))) return cleanText(value);
  const json = looksLikeJson(value) ? redactJsonText(value, depth) : redactEmbeddedJson(value, depth);
  return cleanText(redactSecretsInText(json));
}

/** One text, as redact() leaves a string: for text derived from an envelope (a joined or cut message). */
export function redactText(value: string): string {
  return redactString(value, 0);
}

/** A name/value pair naming a secret (`{name: "X-Api-Key", value: …}`): its value fields are redacted. */
function namesSecret(entries: ReadonlyArray<readonly [string, unknown]>): boolean {
  if (entries.length < 2 || entries.length > 16) return false;
  return entries.some(([key, v]) => typeof v === "string" && isPairNameField(key) && isSecretKey(v));
}

/** `[["Authorization", "Bearer …"], ["Accept", "…"]]`: every item a pair led by a name (a header list, URL params). */
function isPairList(value: unknown[]): boolean {
  return (
    value.length > 0 && value.every((item) => Array.isArray(item) && item.length === 2 && typeof item[0] === "string")
  );
}

function redactPair(pair: unknown[], depth: number): unknown[] {
  const [name, v] = pair;
  if (isSecretKey(name as string) && v !== null && v !== "") return [cleanText(name as string), REDACTED];
  const r = redact(pair, depth);
  return r as unknown[];
}

/**
 * The value with NUL replaced and secrets redacted. What needs no change is
 * returned as it is (most envelopes): only a part with something to change is
 * copied, so a clean envelope costs a walk, no copy.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new TooDeepError();
  if (typeof value === "string") return redactString(value, depth);
  if (Array.isArray(value)) {
    const pairs = isPairList(value);
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i += 1) {
      const v: unknown = value[i];
      const r = pairs ? redactPair(v as unknown[], depth + 1) : redact(v, depth + 1);
      if (r !== v && out === null) out = value.slice(0, i);
      out?.push(r);
    }
    return out ?? value;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    const secretPair = namesSecret(entries);
    let changed = false;
    const redacted = entries.map(([key, v]) => {
      const k = cleanText(key);
      const secret = isSecretKey(key) || (secretPair && isPairValueField(key));
      const r = secret && v !== null && v !== "" ? REDACTED : redact(v, depth + 1);
      if (k !== key || r !== v) changed = true;
      return [k, r] as const;
    });
    // fromEntries defines own properties, so a key such as "__proto__" is kept as data, not taken for the prototype.
    return changed || Object.getPrototypeOf(value) !== Object.prototype ? Object.fromEntries(redacted) : value;
  }
  return value;
}
