import "server-only";
import { z } from "zod";
import type { Db } from "../db/client";
import type { Tx } from "../db/driver";
import { recordAdminAction } from "../audit/admin";
import { ApiError } from "../errors";
import { effectClassSchema, type EffectClass } from "../outcome/vocabulary";
import { volatileArgsSchema } from "../outcome/record-fields";
import { verifyConfigSchema, type VerifyConfig } from "../outcome/verification";
import { sortBySpecificity } from "./effect-class";
import { runbookTextSchema, runbookUrlSchema, summaryTemplateSchema } from "./templates";

// Editing a runtime's tool catalog: admins add, change and remove entries
// (console, API, CLI); each change is one driver transaction with its audit
// entry; the write bumps the settings version (a trigger), so every instance's
// kept copy (load.ts) gives way from its next request. Reads go through Prisma.

/** Entries one runtime may have: far more than a catalog of patterns needs, few enough to read on every request. */
export const CATALOG_LIMIT = 500;

export const catalogPatternSchema = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}]+$/u, "no control characters")
  .describe(
    "A tool name, or a pattern where * stands for any characters (get_*, *_delete, stripe.*.create). Case-sensitive.",
  );

const time = z.string().meta({ format: "date-time" });

export const toolCatalogItemSchema = z
  .object({
    id: z.string(),
    runtime: z.string(),
    pattern: z.string(),
    effect_class: effectClassSchema,
    volatile_args: z
      .array(z.string())
      .nullable()
      .describe("Top-level argument names the arguments' digest leaves out; null: Settle's default list."),
    verify: verifyConfigSchema
      .nullable()
      .describe(
        "How Settle asks the runtime to verify an unknown call of this tool; null: it does not (a person does).",
      ),
    summary: z
      .string()
      .nullable()
      .describe("The one-line template of a call's summary; null: its first few scalar arguments."),
    runbook_url: z.string().nullable().describe("Where to look a call up, a URL template; null: no link."),
    runbook: z.string().nullable().describe("Steps for the person checking by hand; null: none."),
    created_at: time,
    updated_at: time,
  })
  .meta({ id: "ToolCatalogEntry" });
export type ToolCatalogItem = z.infer<typeof toolCatalogItemSchema>;

export const newCatalogEntrySchema = z.object({
  runtime: z.string().trim().min(1).max(200).describe("The runtime's name (it exists once it has a key)."),
  pattern: catalogPatternSchema,
  effect_class: effectClassSchema,
  volatile_args: volatileArgsSchema.nullish(),
  verify: verifyConfigSchema.nullish(),
  summary: summaryTemplateSchema.nullish(),
  runbook_url: runbookUrlSchema.nullish(),
  runbook: runbookTextSchema.nullish(),
});
export type NewCatalogEntry = z.infer<typeof newCatalogEntrySchema>;

/** What an operator reads of an entry (lib/catalog/templates.ts): the summary template, the runbook link, the steps. */
const TEXT_FIELDS = ["summary", "runbook_url", "runbook"] as const;

export const catalogEntryPatchSchema = z
  .object({
    pattern: catalogPatternSchema.optional(),
    effect_class: effectClassSchema.optional(),
    volatile_args: volatileArgsSchema.nullish(),
    verify: verifyConfigSchema.nullish(),
    summary: summaryTemplateSchema.nullish(),
    runbook_url: runbookUrlSchema.nullish(),
    runbook: runbookTextSchema.nullish(),
  })
  .refine(
    (p) =>
      [p.pattern, p.effect_class, p.volatile_args, p.verify, ...TEXT_FIELDS.map((f) => p[f])].some(
        (v) => v !== undefined,
      ),
    "give pattern, effect_class, volatile_args, verify, summary, runbook_url, runbook or more",
  );
export type CatalogEntryPatch = z.infer<typeof catalogEntryPatchSchema>;

type Row = {
  id: string;
  pattern: string;
  effectClass: string;
  volatileArgs: unknown;
  verify: unknown;
  summary: string | null;
  runbookUrl: string | null;
  runbook: string | null;
  createdAt: Date;
  updatedAt: Date;
  runtime: { id: string; name: string };
};

/** A stored list of volatile arguments, or null (the default). */
const volatileOf = (v: unknown): string[] | null => (Array.isArray(v) ? v.map(String) : null);
/** The list as stored: trimmed, each name once; null stays null (the default). */
const storedVolatile = (v: readonly string[] | null | undefined): string | null =>
  v ? JSON.stringify([...new Set(v.map((s) => s.trim()))]) : null;
/** Stored verify settings (validated when written), or null. */
const verifyOf = (v: unknown): VerifyConfig | null => {
  const parsed = verifyConfigSchema.safeParse(v);
  return parsed.success ? parsed.data : null;
};
const storedVerify = (v: VerifyConfig | null | undefined): string | null => (v ? JSON.stringify(v) : null);

function toItem(r: Row): ToolCatalogItem {
  return {
    id: r.id,
    runtime: r.runtime.name,
    pattern: r.pattern,
    effect_class: r.effectClass as EffectClass,
    volatile_args: volatileOf(r.volatileArgs),
    verify: verifyOf(r.verify),
    summary: r.summary,
    runbook_url: r.runbookUrl,
    runbook: r.runbook,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

const snapshot = (r: EntryRow) => ({
  runtime: r.runtime,
  pattern: r.pattern,
  effect_class: r.effect_class,
  volatile_args: volatileOf(r.volatile_args),
  verify: verifyOf(r.verify),
  summary: r.summary,
  runbook_url: r.runbook_url,
  runbook: r.runbook,
});
const include = { runtime: { select: { id: true, name: true } } } as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every entry, or one runtime's: by runtime name, then in the order they are tried (most specific first). */
export async function listToolCatalog(db: Db, filter: { runtime?: string } = {}): Promise<ToolCatalogItem[]> {
  const rows = await db.prisma.toolCatalogEntry.findMany({
    where: filter.runtime ? { runtime: { name: filter.runtime } } : {},
    include,
  });
  const byRuntime = new Map<string, ToolCatalogItem[]>();
  for (const row of rows) {
    const item = toItem(row);
    byRuntime.set(item.runtime, [...(byRuntime.get(item.runtime) ?? []), item]);
  }
  return [...byRuntime.keys()].sort().flatMap((name) => sortBySpecificity(byRuntime.get(name)!));
}

export async function getToolCatalogEntry(db: Db, id: string): Promise<ToolCatalogItem | null> {
  if (!UUID.test(id)) return null;
  const row = await db.prisma.toolCatalogEntry.findUnique({ where: { id }, include });
  return row ? toItem(row) : null;
}

function alreadyListed(runtime: string, pattern: string, existing: { id: string; effect_class: string }): ApiError {
  return new ApiError(
    "CATALOG_ENTRY_EXISTS",
    `Runtime ${runtime} already has ${pattern} (as ${existing.effect_class}): change that entry instead.`,
    {
      field: "pattern",
      entry_id: existing.id,
    },
  );
}

type EntryRow = {
  id: string;
  runtime_id: string;
  runtime: string;
  pattern: string;
  effect_class: string;
  volatile_args: unknown;
  verify: unknown;
  summary: string | null;
  runbook_url: string | null;
  runbook: string | null;
  created_at: string;
  updated_at: string;
};
const ENTRY = `e.id::text AS id, e.runtime_id::text AS runtime_id, r.name AS runtime, e.pattern, e.effect_class, e.volatile_args, e.verify,
  e.summary, e.runbook_url, e.runbook, e.created_at, e.updated_at`;

const itemOf = (r: EntryRow): ToolCatalogItem => ({
  id: r.id,
  runtime: r.runtime,
  pattern: r.pattern,
  effect_class: r.effect_class as EffectClass,
  volatile_args: volatileOf(r.volatile_args),
  verify: verifyOf(r.verify),
  summary: r.summary,
  runbook_url: r.runbook_url,
  runbook: r.runbook,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

// The runtime's row, locked: two admins changing its catalog at once cannot both pass the limit or the duplicate check.
async function lockRuntime(tx: Tx, runtimeId: string): Promise<void> {
  await tx.query(`SELECT 1 FROM runtimes WHERE id = $1::uuid FOR UPDATE`, [runtimeId]);
}

async function findPattern(
  tx: Tx,
  runtimeId: string,
  pattern: string,
): Promise<{ id: string; effect_class: string } | undefined> {
  const [row] = await tx.query<{ id: string; effect_class: string }>(
    `SELECT id::text AS id, effect_class FROM tool_catalog_entries WHERE runtime_id = $1::uuid AND pattern = $2`,
    [runtimeId, pattern],
  );
  return row;
}

export async function addToolCatalogEntry(db: Db, input: NewCatalogEntry, actor: string): Promise<ToolCatalogItem> {
  const runtime = await db.prisma.runtime.findUnique({ where: { name: input.runtime } });
  if (!runtime)
    throw new ApiError(
      "NOT_FOUND",
      `No runtime ${input.runtime}: a runtime exists once it has a key (Admin → Runtime keys).`,
      { field: "runtime" },
    );
  const row = await db.driver.transaction(async (tx) => {
    await lockRuntime(tx, runtime.id);
    const existing = await findPattern(tx, runtime.id, input.pattern);
    if (existing) throw alreadyListed(runtime.name, input.pattern, existing);
    const [{ count }] = (await tx.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM tool_catalog_entries WHERE runtime_id = $1::uuid`,
      [runtime.id],
    )) as [{ count: number }];
    if (count >= CATALOG_LIMIT) {
      throw new ApiError(
        "CATALOG_FULL",
        `Runtime ${runtime.name} has ${count} catalog entries, the most it may have: remove some, or cover tools with a pattern.`,
        {
          limit: CATALOG_LIMIT,
        },
      );
    }
    const [created] = await tx.query<EntryRow>(
      `WITH e AS (
         INSERT INTO tool_catalog_entries (id, runtime_id, pattern, effect_class, volatile_args, verify, summary, runbook_url, runbook)
         VALUES (gen_random_uuid(), $1::uuid, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8) RETURNING *
       )
       SELECT ${ENTRY} FROM e JOIN runtimes r ON r.id = e.runtime_id`,
      [
        runtime.id,
        input.pattern,
        input.effect_class,
        storedVolatile(input.volatile_args),
        storedVerify(input.verify),
        input.summary ?? null,
        input.runbook_url ?? null,
        input.runbook ?? null,
      ],
    );
    await recordAdminAction(tx, {
      actor,
      action: "tool_catalog_entry_added",
      targetType: "tool_catalog_entry",
      targetId: created!.id,
      after: snapshot(created!),
    });
    return created!;
  });
  return itemOf(row);
}

async function lockedEntry(tx: Tx, id: string): Promise<EntryRow | undefined> {
  const [row] = await tx.query<EntryRow>(
    `SELECT ${ENTRY} FROM tool_catalog_entries e JOIN runtimes r ON r.id = e.runtime_id WHERE e.id = $1::uuid FOR UPDATE OF e`,
    [id],
  );
  return row;
}

export async function updateToolCatalogEntry(
  db: Db,
  id: string,
  patch: CatalogEntryPatch,
  actor: string,
): Promise<ToolCatalogItem> {
  const missing = () => new ApiError("NOT_FOUND", `No tool catalog entry ${id}.`);
  if (!UUID.test(id)) throw missing();
  const row = await db.driver.transaction(async (tx) => {
    const [owner] = await tx.query<{ runtime_id: string }>(
      `SELECT runtime_id::text AS runtime_id FROM tool_catalog_entries WHERE id = $1::uuid`,
      [id],
    );
    if (!owner) throw missing();
    // The runtime first, as adding does, then the entry as it is now (it may have gone meanwhile).
    await lockRuntime(tx, owner.runtime_id);
    const before = await lockedEntry(tx, id);
    if (!before) throw missing();
    const pattern = patch.pattern ?? before.pattern;
    if (pattern !== before.pattern) {
      const existing = await findPattern(tx, before.runtime_id, pattern);
      if (existing) throw alreadyListed(before.runtime, pattern, existing);
    }
    const [updated] = await tx.query<EntryRow>(
      `WITH e AS (
         UPDATE tool_catalog_entries SET pattern = $2, effect_class = $3, volatile_args = $4::jsonb, verify = $5::jsonb,
                summary = $6, runbook_url = $7, runbook = $8, updated_at = now()
          WHERE id = $1::uuid RETURNING *
       )
       SELECT ${ENTRY} FROM e JOIN runtimes r ON r.id = e.runtime_id`,
      [
        id,
        pattern,
        patch.effect_class ?? before.effect_class,
        patch.volatile_args === undefined
          ? storedVolatile(volatileOf(before.volatile_args))
          : storedVolatile(patch.volatile_args),
        patch.verify === undefined ? storedVerify(verifyOf(before.verify)) : storedVerify(patch.verify),
        ...TEXT_FIELDS.map((f) => (patch[f] === undefined ? before[f] : patch[f])),
      ],
    );
    await recordAdminAction(tx, {
      actor,
      action: "tool_catalog_entry_changed",
      targetType: "tool_catalog_entry",
      targetId: id,
      before: snapshot(before),
      after: snapshot(updated!),
    });
    return updated!;
  });
  return itemOf(row);
}

/** Removes the entry and answers it as it was; null when there is none. */
export async function removeToolCatalogEntry(db: Db, id: string, actor: string): Promise<ToolCatalogItem | null> {
  if (!UUID.test(id)) return null;
  const removed = await db.driver.transaction(async (tx) => {
    const [row] = await tx.query<EntryRow>(
      `WITH e AS (DELETE FROM tool_catalog_entries WHERE id = $1::uuid RETURNING *)
       SELECT ${ENTRY} FROM e JOIN runtimes r ON r.id = e.runtime_id`,
      [id],
    );
    if (!row) return null;
    await recordAdminAction(tx, {
      actor,
      action: "tool_catalog_entry_removed",
      targetType: "tool_catalog_entry",
      targetId: id,
      before: snapshot(row),
    });
    return row;
  });
  if (!removed) return null;
  return itemOf(removed);
}

/** The CLI's `catalog set`: adds the pattern, or changes the class of the entry it already has. */
export async function setToolCatalogEntry(
  db: Db,
  input: NewCatalogEntry,
  actor: string,
): Promise<{ entry: ToolCatalogItem; created: boolean }> {
  const existing = (await listToolCatalog(db, { runtime: input.runtime })).find((e) => e.pattern === input.pattern);
  if (!existing) return { entry: await addToolCatalogEntry(db, input, actor), created: true };
  const sameVolatile =
    input.volatile_args === undefined ||
    JSON.stringify(existing.volatile_args) === storedVolatile(input.volatile_args) ||
    (existing.volatile_args === null && input.volatile_args === null);
  const sameVerify = input.verify === undefined || storedVerify(existing.verify) === storedVerify(input.verify);
  const texts = TEXT_FIELDS.filter((f) => input[f] !== undefined && (input[f] ?? null) !== existing[f]);
  if (existing.effect_class === input.effect_class && sameVolatile && sameVerify && texts.length === 0)
    return { entry: existing, created: false };
  const patch = {
    effect_class: input.effect_class,
    ...(input.volatile_args === undefined ? {} : { volatile_args: input.volatile_args }),
    ...(input.verify === undefined ? {} : { verify: input.verify }),
    ...Object.fromEntries(texts.map((f) => [f, input[f]])),
  };
  return { entry: await updateToolCatalogEntry(db, existing.id, patch, actor), created: false };
}
