import type { EffectClass } from "../outcome/vocabulary";
import { DEFAULT_VOLATILE_ARGS } from "../outcome/record-fields";
import type { VerifyConfig } from "../outcome/verification";

// Which effect class a runtime's tool catalog gives a tool: pure, no I/O, so
// OTLP ingest, the API and the console share one reading. A pattern is a tool
// name where `*` stands for any characters (none included), as in the MCP
// gateway's `match`; matching is exact and case-sensitive.
//
// The most specific matching entry wins, whatever order the entries come in
// (decision 023): a name without `*` before any pattern, then the pattern with
// more literal characters, then the one with fewer `*`, then the smaller
// pattern by code unit (duplicates are refused, so this always decides).

export type ToolCatalogEntry = {
  pattern: string;
  effect_class: EffectClass;
  /** Top-level argument names left out of the arguments' digest; null or absent: Settle's default list. */
  volatile_args?: readonly string[] | null;
  /** How Settle asks the runtime to verify an unknown call (decision 027); null or absent: it does not. */
  verify?: VerifyConfig | null;
  /** What a call was and where to check it (lib/catalog/templates.ts); null or absent: none. */
  summary?: string | null;
  runbook_url?: string | null;
  runbook?: string | null;
};

/** Greedy wildcard match with backtracking to the last `*` only: O(pattern × tool), never exponential. */
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

const stars = (pattern: string) => pattern.split("*").length - 1;

/** Negative when `a` is more specific than `b`: the order entries are listed and tried in. */
export function compareSpecificity(a: string, b: string): number {
  const starsA = stars(a);
  const starsB = stars(b);
  if ((starsA === 0) !== (starsB === 0)) return starsA === 0 ? -1 : 1;
  const literalA = a.length - starsA;
  const literalB = b.length - starsB;
  if (literalA !== literalB) return literalB - literalA;
  if (starsA !== starsB) return starsA - starsB;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The entries in the order they are tried: most specific first. */
export function sortBySpecificity<T extends { pattern: string }>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => compareSpecificity(a.pattern, b.pattern));
}

/**
 * The effect class of `tool`: the most specific matching entry's; with none,
 * `read` for a tool its span calls a datastore (OpenTelemetry's
 * `gen_ai.tool.type = datastore`); otherwise null, which Settle treats as a
 * write (docs/outcome-model.md §2: an unknown effect class is a write).
 */
export function effectClassFor(
  entries: ToolCatalogEntry[],
  tool: string,
  toolType?: string | null,
): EffectClass | null {
  const best = entryFor(entries, tool);
  if (best) return best.effect_class;
  return toolType === "datastore" ? "read" : null;
}

/** The most specific entry matching `tool`, or null. */
export function entryFor<T extends ToolCatalogEntry>(entries: readonly T[], tool: string): T | null {
  let best: T | null = null;
  for (const entry of entries) {
    if (!matchesPattern(entry.pattern, tool)) continue;
    if (best === null || compareSpecificity(entry.pattern, best.pattern) < 0) best = entry;
  }
  return best;
}

/** The arguments of `tool` its digest leaves out (decision 028): the most specific matching entry's list, else Settle's default. */
export function volatileArgsFor(entries: readonly ToolCatalogEntry[], tool: string): readonly string[] {
  return entryFor(entries, tool)?.volatile_args ?? DEFAULT_VOLATILE_ARGS;
}

/** How Settle verifies an unknown call of `tool`: the most specific matching entry's settings, or null. */
export function verifyFor(entries: readonly ToolCatalogEntry[], tool: string): VerifyConfig | null {
  return entryFor(entries, tool)?.verify ?? null;
}

/** A catalog pattern as a SQL LIKE pattern (`*` → `%`, LIKE's own `%`, `_` and `\` escaped), to preselect rows in SQL. */
export function likePatternOf(pattern: string): string {
  return pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, "%");
}
