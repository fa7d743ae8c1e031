import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import { effectClassSchema, type EffectClass } from "../outcome/vocabulary";
import { effectClassFor, sortBySpecificity, volatileArgsFor, type ToolCatalogEntry } from "./effect-class";
import { keptSetting } from "../db/settings-version";
import { verifyConfigSchema, type VerifyConfig } from "../outcome/verification";

// A runtime's catalog for ingest, which asks for it on every request: kept in
// memory per runtime while the settings version says nothing changed
// (lib/db/settings-version.ts). An edit anywhere — this instance, another, the
// CLI — is in force here from the next request after it commits.
const kept = keptSetting<string, ToolCatalogEntry[]>("toolCatalogs");

/**
 * The catalog of the runtime a runtime key belongs to, most specific entry
 * first. `runtimeKeyId` is the runtime's id as the key's principal carries it
 * (`principal.runtime.id`): the catalog belongs to the runtime, so every key
 * of it (a rotated one too) reads the same entries (decision 023).
 */
export function loadToolCatalog(db: Db, runtimeKeyId: string): Promise<ToolCatalogEntry[]> {
  return kept.get(runtimeKeyId, () => selectToolCatalog(db, runtimeKeyId));
}

async function selectToolCatalog(db: Db, runtimeKeyId: string): Promise<ToolCatalogEntry[]> {
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
  return sortBySpecificity(
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
}

/**
 * A runtime's catalog for one request: read at most once, and only if asked (a request whose records all name
 * their class and carry no arguments never reads it). Ingest, OTLP, the guard and verifiers' answers take one and
 * hand it down, so a request reads the catalog, and checks the settings version, once.
 */
export type CatalogOnce = () => Promise<ToolCatalogEntry[]>;

export function catalogOnce(db: Db, runtimeId: string): CatalogOnce {
  let read: Promise<ToolCatalogEntry[]> | null = null;
  return () => (read ??= loadToolCatalog(db, runtimeId));
}

/** What ingest and the guard read of a tool in a catalog: its volatile arguments, and its effect class for a record that names none. */
export function toolReadingOf(entries: ToolCatalogEntry[]): {
  volatileArgs: (tool: string) => readonly string[];
  effectClass: (tool: string) => EffectClass | null;
} {
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
