import { otherMethods, withRoute } from "@/lib/http/route";
import { getRuntimeCatalog, runtimeCatalogSchema } from "@/lib/catalog/load";

// A runtime reads its own tool catalog (the MCP gateway's `settle_catalog`): what Settle's admins classified.
export const GET = withRoute({
  auth: "runtime",
  summary: "This runtime's tool catalog, most specific entry first",
  description:
    "What a runtime's tools are, as Settle's admins set them: the first entry whose pattern matches a tool's name (`*` for any characters) gives its effect class. A tool no entry matches is a write.",
  tags: ["Tool catalog"],
  response: runtimeCatalogSchema,
  handler: async ({ db, principal }) => getRuntimeCatalog(db, principal.runtime),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
