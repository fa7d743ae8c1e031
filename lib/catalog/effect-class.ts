import type { EffectClass } from "../outcome/vocabulary";

// The effect class of a tool that runtimes do not state it for (OTLP spans
// carry none): the runtime key's tool catalog first, then what the span says
// of itself. Pure. null means nobody said: Settle treats the call as a write
// (SPEC §2), the safe default.

export type ToolCatalogEntry = { pattern: string; effect_class: EffectClass };

function escape(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

/** A catalog pattern matches a whole tool name; `*` stands for any run of characters. */
export function patternMatches(pattern: string, tool: string): boolean {
  if (!pattern.includes("*")) return pattern === tool;
  return new RegExp(`^${pattern.split("*").map(escape).join(".*")}$`, "s").test(tool);
}

/**
 * The first catalog entry whose pattern matches the tool decides; with none,
 * a GenAI `gen_ai.tool.type = datastore` is a read; otherwise null (a write).
 */
export function effectClassFor(entries: ToolCatalogEntry[], tool: string, toolType?: string | null): EffectClass | null {
  const entry = entries.find((e) => patternMatches(e.pattern, tool));
  if (entry) return entry.effect_class;
  return toolType === "datastore" ? "read" : null;
}
