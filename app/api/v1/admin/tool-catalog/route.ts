import { z } from "zod";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import { addToolCatalogEntry, newCatalogEntrySchema, toolCatalogItemSchema } from "@/lib/catalog/catalog";
import { catalogEntryServedSchema, listToolCatalogServed } from "@/lib/verify/liveness";
import { itemsOf } from "@/lib/http/schemas";

// Runtimes' tool catalogs: tool name or pattern → effect class, for runtimes that send no effect class (OTLP, the MCP gateway).
export const GET = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Tool catalog entries (admins), by runtime, most specific first",
  tags: ["Tool catalog"],
  description:
    "An entry with a verifier says whether anyone serves it now (`serving`): a worker that asked within two every_s (at least a minute), or an enabled webhook endpoint.",
  response: itemsOf(catalogEntryServedSchema),
  query: z.object({ runtime: z.string().trim().min(1).max(200).optional().describe("Only this runtime's entries.") }),
  handler: async ({ db, query }) => ({ items: await listToolCatalogServed(db, query) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Add a tool catalog entry (admins)",
  description:
    "A pattern a runtime already has is refused with `CATALOG_ENTRY_EXISTS` (change that entry instead); a runtime has at most 500 entries (`CATALOG_FULL`).",
  tags: ["Tool catalog"],
  errors: ["NOT_FOUND", "CATALOG_ENTRY_EXISTS", "CATALOG_FULL"],
  response: { 201: toolCatalogItemSchema },
  body: newCatalogEntrySchema,
  handler: async ({ db, principal, body }) => json(await addToolCatalogEntry(db, body, principal.user.email), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
