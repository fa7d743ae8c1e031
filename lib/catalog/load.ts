import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { effectClassSchema, type EffectClass } from "../outcome/vocabulary";
import { sortBySpecificity, type ToolCatalogEntry } from "./effect-class";
import { processWide } from "../process-wide";

// A runtime's catalog for ingest, which asks for it on every request: kept
// for a moment per runtime, as runtime keys are (lib/identity/runtime-keys.ts).
// An edit in this process (catalog.ts) forgets the copy at once; an edit on
// another instance, or by the CLI, takes effect here within CATALOG_CACHE_MS.

export const CATALOG_CACHE_MS = 5_000;
// Process-wide: an edit through the console (Next.js's bundle) must reach OTLP and envelope ingest
// served by the fast lane (another bundle of the same modules) at once, not after the cache time.
const cached = processWide("toolCatalogs", () => new Map<string, { entries: ToolCatalogEntry[]; until: number }>());

/** Drops this process's copy of one runtime's catalog (after an edit), or of every one. */
export function forgetToolCatalog(runtimeId?: string): void {
  if (runtimeId === undefined) cached.clear();
  else cached.delete(runtimeId);
}

/**
 * The catalog of the runtime a runtime key belongs to, most specific entry
 * first. `runtimeKeyId` is the runtime's id as the key's principal carries it
 * (`principal.runtime.id`): the catalog belongs to the runtime, so every key
 * of it (a rotated one too) reads the same entries (decision 023).
 */
export async function loadToolCatalog(db: Db, runtimeKeyId: string): Promise<ToolCatalogEntry[]> {
  const known = cached.get(runtimeKeyId);
  if (known && known.until > Date.now()) return known.entries;
  const rows = await db.prisma.toolCatalogEntry.findMany({ where: { runtimeId: runtimeKeyId }, select: { pattern: true, effectClass: true } });
  const entries = sortBySpecificity(rows.map((r) => ({ pattern: r.pattern, effect_class: r.effectClass as EffectClass })));
  if (cached.size > 1_000) cached.clear();
  cached.set(runtimeKeyId, { entries, until: Date.now() + CATALOG_CACHE_MS });
  return entries;
}

export const runtimeCatalogSchema = z
  .object({
    runtime: z.string(),
    items: z.array(z.object({ pattern: z.string(), effect_class: effectClassSchema })).describe("Most specific first: the first whose pattern matches a tool's name decides."),
  })
  .meta({ id: "RuntimeToolCatalog" });

/** GET /api/v1/tool-catalog: the calling runtime's own catalog, and nothing of any other runtime's. */
export async function getRuntimeCatalog(db: Db, runtime: { id: string; name: string }): Promise<z.infer<typeof runtimeCatalogSchema>> {
  return { runtime: runtime.name, items: await loadToolCatalog(db, runtime.id) };
}
