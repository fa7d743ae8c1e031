import { z } from "zod";
import { orNotFound } from "@/lib/errors";
import { otherMethods, withRoute } from "@/lib/http/route";
import {
  catalogEntryPatchSchema,
  getToolCatalogEntry,
  removeToolCatalogEntry,
  toolCatalogItemSchema,
  updateToolCatalogEntry,
} from "@/lib/catalog/catalog";
import { deletedSchema } from "@/lib/http/schemas";

const params = z.object({ entry_id: z.string().min(1).max(100) });

export const GET = withRoute({
  auth: "user",
  permission: "administer",
  summary: "One tool catalog entry (admins)",
  tags: ["Tool catalog"],
  errors: ["NOT_FOUND"],
  response: toolCatalogItemSchema,
  params,
  handler: async ({ db, params }) => {
    const entry = await getToolCatalogEntry(db, params.entry_id);
    return orNotFound(entry, `No tool catalog entry ${params.entry_id}.`);
  },
});

export const PATCH = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Change a tool catalog entry's pattern or effect class (admins)",
  tags: ["Tool catalog"],
  errors: ["NOT_FOUND", "CATALOG_ENTRY_EXISTS"],
  response: toolCatalogItemSchema,
  params,
  body: catalogEntryPatchSchema,
  handler: async ({ db, params, body, principal }) =>
    updateToolCatalogEntry(db, params.entry_id, body, principal.user.email),
});

export const DELETE = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Remove a tool catalog entry (admins); its tools fall back to the next matching entry, or count as writes",
  tags: ["Tool catalog"],
  errors: ["NOT_FOUND"],
  response: deletedSchema,
  params,
  handler: async ({ db, params, principal }) => {
    const removed = await removeToolCatalogEntry(db, params.entry_id, principal.user.email);
    orNotFound(removed, `No tool catalog entry ${params.entry_id}.`);
    return { deleted: true as const };
  },
});

export const { POST, PUT } = otherMethods("GET", "PATCH", "DELETE");
