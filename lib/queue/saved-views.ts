import { z } from "zod";
import type { Db } from "../db/client";
import { normalizeQueueQuery } from "./queue";

// A person's saved queue views: a name and the queue filter, kept as the URL
// query it came from so that applying one is just opening that URL.

export const savedViewInputSchema = z.object({
  name: z.string().trim().min(1, "give the view a name").max(80),
  query: z.string().max(2000).describe("The queue's URL query, e.g. status=outcome_unknown&effect_class=money."),
});
export type SavedViewInput = z.infer<typeof savedViewInputSchema>;

export const savedViewSchema = z
  .object({ id: z.string(), name: z.string(), query: z.string(), created_at: z.string().meta({ format: "date-time" }) })
  .meta({ id: "SavedView" });
export type SavedViewInfo = z.infer<typeof savedViewSchema>;

const toInfo = (v: { id: string; name: string; query: string; createdAt: Date }): SavedViewInfo => ({
  id: v.id,
  name: v.name,
  query: v.query,
  created_at: v.createdAt.toISOString(),
});

export async function listSavedViews(db: Db, userId: string): Promise<SavedViewInfo[]> {
  const views = await db.prisma.savedView.findMany({ where: { userId }, orderBy: [{ name: "asc" }] });
  return views.map(toInfo);
}

/** Saving under a name the person already uses replaces that view's filter. */
export async function saveView(db: Db, userId: string, input: SavedViewInput): Promise<SavedViewInfo> {
  const { name, query } = savedViewInputSchema.parse(input);
  const kept = normalizeQueueQuery(query);
  const view = await db.prisma.savedView.upsert({
    where: { userId_name: { userId, name } },
    create: { userId, name, query: kept },
    update: { query: kept },
  });
  return toInfo(view);
}

/** Deletes one of the person's own views; false when they have none with that id. */
export async function deleteSavedView(db: Db, userId: string, id: string): Promise<boolean> {
  const { count } = await db.prisma.savedView.deleteMany({ where: { id, userId } });
  return count > 0;
}
