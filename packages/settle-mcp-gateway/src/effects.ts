import { matchesPattern } from "@settle/client";
import type { EffectClass, EffectOrUnclassified, GatewayConfig, ToolRule } from "./config.js";

// A pattern is read as Settle reads it (`*` for any characters, nothing else special; greedy, going back only to
// the last `*`, so O(pattern × tool) at worst): the matcher is @settle/client's, which the gateway depends on, and
// test/pattern.test.ts holds it to the server's own (lib/catalog/effect-class.ts; the app does not depend on the
// published packages).
export { matchesPattern };

// Which effect class a tool call has (source article 002 (docs/outcome-model.md)'s table). The configuration
// decides, then Settle's tool catalog for the key's runtime (settle_catalog);
// the server's tool annotations are only a default, because the MCP
// specification calls them untrusted: a server may say readOnlyHint of a
// tool that charges a card, and a read is never guarded.

export type ToolAnnotations = { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };

/** The first rule whose pattern matches the tool's name. */
export function ruleFor(config: GatewayConfig, tool: string): ToolRule | null {
  return config.tools.find((rule) => matchesPattern(rule.match, tool)) ?? null;
}

/** A catalog entry as GET /api/v1/tool-catalog answers it. */
export type CatalogEntry = { pattern: string; effect_class: EffectClass };

/** The first entry whose pattern matches: Settle lists them most specific first, so the first is the one Settle would pick. */
export function catalogEffectFor(entries: readonly CatalogEntry[], tool: string): EffectClass | null {
  return entries.find((entry) => matchesPattern(entry.pattern, tool))?.effect_class ?? null;
}

export type Classification = {
  effect: EffectOrUnclassified;
  source: "config" | "settle_catalog" | "annotations" | "default";
};

/**
 * Annotations as defaults: readOnlyHint → read; destructiveHint → destructive
 * (the specification's default for a tool that is not read-only is
 * destructive, so only an explicit false makes it a plain write: create).
 */
function fromAnnotations(a: ToolAnnotations | undefined): EffectOrUnclassified | null {
  if (!a) return null;
  if (a.readOnlyHint === true) return "read";
  if (a.destructiveHint === true) return "destructive";
  if (a.destructiveHint === false) return "create";
  return null;
}

export function classifyEffect(
  config: GatewayConfig,
  rule: ToolRule | null,
  annotations: ToolAnnotations | undefined,
  fromSettle: EffectClass | null = null,
): Classification {
  if (rule?.effect) return { effect: rule.effect, source: "config" };
  if (fromSettle) return { effect: fromSettle, source: "settle_catalog" };
  const hinted = fromAnnotations(annotations);
  if (hinted) return { effect: hinted, source: "annotations" };
  return { effect: config.default_effect, source: "default" };
}
