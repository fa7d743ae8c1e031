import { otherMethods, withRoute } from "@/lib/http/route";
import { openApiDocumentSchema } from "@/lib/http/schemas";

// The OpenAPI 3.1 document, generated from every route's declaration. Loaded
// on demand: the document imports every route module, this one included.
export const GET = withRoute({
  auth: false,
  database: false,
  summary: "This document: Settle's API in OpenAPI 3.1",
  tags: ["Meta"],
  response: openApiDocumentSchema,
  handler: async () => (await import("@/server/openapi")).openApiDocument(),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
