import type { EffectClass } from "../types.js";

// Who a framework's tool call is to Settle: its task, its idempotency key and
// its effect class. The key is derived from the intent — the tool and its
// arguments, in canonical JSON — so the same call asked for again carries the
// same key, whatever the model named the attempt (source article 002: never from a
// payload that changes between tries: the tool-call id is not in it).

/**
 * JSON with object keys sorted at every level: the same arguments give the same text. A bigint (an integer past
 * 2^53, as the client reads one) is its digits, as Settle's digest writes it.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The default key: the tool and a digest of its canonical arguments (Settle scopes it by runtime and task). */
export async function defaultIdempotencyKey(tool: string, args: unknown): Promise<string> {
  return `${tool}:${(await sha256Hex(`${tool}\n${canonicalJson(args)}`)).slice(0, 40)}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Settle's catalog pattern match (`*` for any characters), as the server reads it (lib/catalog/effect-class.ts). */
export function matchesPattern(pattern: string, tool: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < tool.length) {
    if (p < pattern.length && pattern[p] !== "*" && pattern[p] === tool[t]) {
      p += 1;
      t += 1;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p;
      resume = t;
      p += 1;
    } else if (star >= 0) {
      p = star + 1;
      resume += 1;
      t = resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p += 1;
  return p === pattern.length;
}

export type CatalogEntry = { pattern: string; effect_class: EffectClass };

/** GET /api/v1/tool-catalog lists the most specific entry first: the first that matches decides. */
export function effectFromCatalog(entries: readonly CatalogEntry[], tool: string): EffectClass | null {
  return entries.find((e) => matchesPattern(e.pattern, tool))?.effect_class ?? null;
}
