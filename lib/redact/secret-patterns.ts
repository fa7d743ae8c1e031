// Credentials that give themselves away by their shape, wherever they sit in
// a text: a message, a note, a text part, an error string. Each is replaced in
// place, so the text around it stays readable.
//
// Every string of every envelope passes here on the ingest hot path, so a
// text is first tested against MAY_HOLD_SECRET, one regex of the literal
// markers that every pattern below needs; only a text that has one runs the
// pattern set. No pattern nests a quantifier or lets two unbounded runs of the
// same characters meet, so a long near-miss costs linear time, never
// catastrophic backtracking.

import { isPairNameField, isPairValueField, isSecretKey, mayNameSecret } from "./secret-keys";

export const REDACTED = "[redacted]";

/**
 * A superset of every pattern below: each match of a pattern contains a match
 * of this. Case-sensitive, which V8 runs about twice as fast as /i, with the
 * header words spelt in either case (as they are matched); a false positive
 * ("Asia", "basic") only costs the full pass.
 */
export const MAY_HOLD_SECRET =
  /sk-|[rs]k_(?:live|test)_|gh[pousr]_|github_pat_|xox[abprs]-|hooks\.slack\.com|AKIA|ASIA|AIza|eyJ|-----BEGIN|:\/\/[^\s/?#@]*@|[Bb][Ee][Aa][Rr][Ee][Rr]|[Bb][Aa][Ss][Ii][Cc]|[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|[Aa][Ww][Ss]_[Ss][Ee][Cc][Rr][Ee][Tt]_|stl_(?:rk|pat)_/;

/** Random tokens have digits or mixed case; prose after "Bearer" or "sk-" has neither. */
function looksRandom(token: string): boolean {
  return /[0-9]/.test(token) || /[A-Z]/.test(token.slice(1)) || /[+/=]/.test(token);
}

type SecretPattern = {
  kind: string;
  pattern: RegExp;
  /** What replaces a match; by default the match is replaced whole. */
  replace?: (match: string, ...groups: string[]) => string;
};

const keepFirst = (_match: string, kept: string) => `${kept}${REDACTED}`;

// Order matters: a block or a header is taken whole before the tokens inside it are looked at.
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    kind: "PEM private key",
    // Up to its END line, or to the end of a text cut before it (a truncated message still hides the key).
    pattern: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|[\s\S]*)/g,
  },
  {
    kind: "Authorization header",
    // After a scheme anything is the credential; without one, only what looks random ("Authorization: denied" stays).
    pattern: /(\bauthorization["']?\s*[:=]\s*["']?)((?:bearer|basic|token)\s+)?([^\s"',;]+)/gi,
    // An unmatched group arrives as undefined.
    replace: (match, kept: string, scheme: string | undefined, value: string) =>
      scheme !== undefined || looksRandom(value) ? `${kept}${scheme ?? ""}${REDACTED}` : match,
  },
  {
    kind: "password in a URL",
    // The user part holds no ':', so the split at the first ':' is the only one tried.
    pattern: /(:\/\/[^\s:/?#@]*:)[^\s/?#@]+@/g,
    replace: (_match, kept: string) => `${kept}${REDACTED}@`,
  },
  {
    kind: "Bearer or Basic credential",
    pattern: /(\b(?:bearer|basic)\s+)([A-Za-z0-9._~+/-]{8,}=*)/gi,
    replace: (match, kept: string, token: string) => (looksRandom(token) ? `${kept}${REDACTED}` : match),
  },
  { kind: "Slack webhook URL", pattern: /(hooks\.slack\.com\/services\/)[A-Za-z0-9/_-]+/g, replace: keepFirst },
  {
    kind: "OpenAI or Anthropic key",
    // sk-…, sk-proj-…, sk-ant-api03-…; a digit tells a key from a hyphenated word.
    pattern: /\bsk-[A-Za-z0-9_-]{20,}/g,
    replace: (match) => (/[0-9]/.test(match) ? REDACTED : match),
  },
  // Secret and restricted keys only: a publishable key (pk_) is public by design.
  { kind: "Stripe key", pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{8,}/g },
  { kind: "GitHub token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { kind: "Slack token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { kind: "AWS access key id", pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g },
  {
    kind: "AWS secret access key",
    pattern: /(aws_secret_access_key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{16,}/gi,
    replace: keepFirst,
  },
  { kind: "Google API key", pattern: /\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g },
  // Starts only where a run of its characters starts: from inside one ("eyJ-eyJ-…"), a failing match would read it again.
  { kind: "JSON Web Token", pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/g },
  // The visible prefix (`stl_rk_` and 8 id characters) names the key and is no secret; what follows is.
  { kind: "Settle token", pattern: /(\bstl_(?:rk|pat)_[a-z0-9]{8}_)[A-Za-z0-9]{8,}/g, replace: keepFirst },
];

/** A value that is nothing but an HTTP credential ("Bearer abc", a header as a client logged it) is replaced whole, short token or not. */
const WHOLE_CREDENTIAL = /^\s*(?:bearer|basic)\s+\S+\s*$/i;

function redactPatterns(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  if (WHOLE_CREDENTIAL.test(text)) return REDACTED;
  let out = text;
  for (const { pattern, replace } of SECRET_PATTERNS) {
    out = replace ? out.replace(pattern, replace) : out.replace(pattern, REDACTED);
  }
  return out;
}

// `password=hunter2`, `DB_PASSWORD=…`, `pwd: hunter2`, `"api_key": "…"` in a log line, `?token=…` in a URL: a
// name the key rule calls secret (secret-keys.ts), then `=` or `:`, then its value — quoted, or up to a space or
// a separator. The name must start where a run of name characters starts, so each separator is tried from one
// place only, and the value is looked at, not taken, so a name inside another's value (`url=https://h/?token=…`)
// is still found.
const KEY_VALUE =
  /(?<![\w.\u00a0-\uffff-])([\w.\u00a0-\uffff-]{1,64})["']?[ \t]{0,3}[:=][ \t]{0,3}(?=((?:[Bb]earer|[Bb]asic|[Tt]oken|[Dd]igest)[ \t]+)?(\[redacted\]|"[^"\n]{0,512}"?|'[^'\n]{0,512}'?|[^\s"'&,;<>{}[\]()]+))/g;

/** Words that say what became of a credential and are never one: `token: expired` stays readable. */
const STATUS_WORDS = new Set(
  "denied expired invalid missing required incorrect wrong revoked rejected empty none null nil undefined true false yes no ok set unset present absent changed reset hidden masked not unknown valid accepted locked".split(
    " ",
  ),
);

function keepsValue(value: string): boolean {
  const bare = value.replace(/^["']|["']$/g, "");
  return bare === "" || bare.startsWith(REDACTED) || STATUS_WORDS.has(bare.replace(/[.!]+$/, "").toLowerCase());
}

function redactKeyValues(text: string): string {
  if (!(text.includes("=") || text.includes(":")) || !mayNameSecret(text)) return text;
  let out = "";
  let copied = 0;
  KEY_VALUE.lastIndex = 0;
  for (let m = KEY_VALUE.exec(text); m; m = KEY_VALUE.exec(text)) {
    const [matched, name, scheme = "", value = ""] = m;
    const valueAt = m.index + matched.length + scheme.length;
    if (valueAt < copied || !isSecretKey(name!) || keepsValue(value)) continue;
    const quote = /^["']/.test(value) ? value[0]! : "";
    out += `${text.slice(copied, valueAt)}${quote}${REDACTED}${quote && value.endsWith(quote) && value.length > 1 ? quote : ""}`;
    copied = valueAt + value.length;
    KEY_VALUE.lastIndex = Math.max(KEY_VALUE.lastIndex, copied);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

// A name/value pair written out in JSON that did not parse (cut short, or inside a longer text):
// `"name": "X-Api-Key", "value": "…"`, the name's field first, the value's right after it.
const PAIR_IN_TEXT =
  /"([\w.-]{1,24})"[ \t]*:[ \t]*"([^"\n]{1,100})"[ \t]*,[ \t]*"([\w.-]{1,24})"[ \t]*:[ \t]*(?=("[^"\n]{0,512}"?|[^\s"'&,;<>{}[\]()]+))/g;

function redactPairsInText(text: string): string {
  if (!text.includes('",')) return text;
  let out = "";
  let copied = 0;
  PAIR_IN_TEXT.lastIndex = 0;
  for (let m = PAIR_IN_TEXT.exec(text); m; m = PAIR_IN_TEXT.exec(text)) {
    const [matched, nameField, name, valueField, value = ""] = m;
    const valueAt = m.index + matched.length;
    if (!isPairNameField(nameField!) || !isPairValueField(valueField!) || !isSecretKey(name!) || keepsValue(value))
      continue;
    out += `${text.slice(copied, valueAt)}${value.startsWith('"') ? `"${REDACTED}"` : REDACTED}`;
    copied = valueAt + value.length;
    PAIR_IN_TEXT.lastIndex = Math.max(PAIR_IN_TEXT.lastIndex, copied);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * The text with every credential replaced by [redacted]: the shapes above, the value of every
 * `secret_name=value` or `secret_name: value`, and of a pair naming a secret. A text with none is
 * returned as it is.
 */
export function redactSecretsInText(text: string): string {
  return redactPairsInText(redactKeyValues(redactPatterns(text)));
}
