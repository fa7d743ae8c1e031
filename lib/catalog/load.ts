import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { effectClassSchema, type EffectClass } from "../outcome/vocabulary";
import { effectClassFor, sortBySpecificity, volatileArgsFor, type ToolCatalogEntry } from "./effect-class";
import { processWide } from "../process-wide";
import { verifyConfigSchema, type VerifyConfig } from "../outcome/verification";

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
  const rows = await db.prisma.toolCatalogEntry.findMany({
    where: { runtimeId: runtimeKeyId },
    select: {
      pattern: true,
      effectClass: true,
      volatileArgs: true,
      verify: true,
      summary: true,
      runbookUrl: true,
      runbook: true,
    },
  });
  const entries = sortBySpecificity(
    rows.map((r) => ({
      pattern: r.pattern,
      effect_class: r.effectClass as EffectClass,
      volatile_args: (r.volatileArgs as string[] | null) ?? null,
      verify: (r.verify as VerifyConfig | null) ?? null,
      summary: r.summary,
      runbook_url: r.runbookUrl,
      runbook: r.runbook,
    })),
  );
  if (cached.size > 1_000) cached.clear();
  cached.set(runtimeKeyId, { entries, until: Date.now() + CATALOG_CACHE_MS });
  return entries;
}

/**
 * What ingest and the guard read of a tool in the runtime's catalog (cached as above): its volatile arguments, and
 * its effect class for a record that names none.
 */
export async function loadToolReading(
  db: Db,
  runtimeId: string,
): Promise<{ volatileArgs: (tool: string) => readonly string[]; effectClass: (tool: string) => EffectClass | null }> {
  const entries = await loadToolCatalog(db, runtimeId);
  return {
    volatileArgs: (tool) => volatileArgsFor(entries, tool),
    effectClass: (tool) => effectClassFor(entries, tool),
  };
}

export const runtimeCatalogSchema = z
  .object({
    runtime: z.string(),
    items: z
      .array(
        z.object({
          pattern: z.string(),
          effect_class: effectClassSchema,
          volatile_args: z
            .array(z.string())
            .nullable()
            .describe("Left out of the arguments' digest; null: Settle's default list."),
          verify: verifyConfigSchema
            .nullable()
            .describe(
              "When Settle asks this runtime to verify an unknown call (GET /api/v1/verifications); null: never.",
            ),
        }),
      )
      .describe("Most specific first: the first whose pattern matches a tool's name decides."),
  })
  .meta({ id: "RuntimeToolCatalog" });

/** GET /api/v1/tool-catalog: the calling runtime's own catalog, and nothing of any other runtime's. */
export async function getRuntimeCatalog(
  db: Db,
  runtime: { id: string; name: string },
): Promise<z.infer<typeof runtimeCatalogSchema>> {
  const entries = await loadToolCatalog(db, runtime.id);
  return {
    runtime: runtime.name,
    items: entries.map((e) => ({
      pattern: e.pattern,
      effect_class: e.effect_class,
      volatile_args: e.volatile_args ? [...e.volatile_args] : null,
      verify: e.verify ?? null,
    })),
  };
}
