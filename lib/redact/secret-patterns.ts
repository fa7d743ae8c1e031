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

/** The text with every credential pattern replaced by [redacted]; a text with none is returned as it is. */
export function redactSecretsInText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  if (WHOLE_CREDENTIAL.test(text)) return REDACTED;
  let out = text;
  for (const { pattern, replace } of SECRET_PATTERNS) {
    out = replace ? out.replace(pattern, replace) : out.replace(pattern, REDACTED);
  }
  return out;
}
