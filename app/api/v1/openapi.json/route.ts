import { otherMethods, withRoute } from "@/lib/api/route";
import { openApiDocument } from "@/lib/api/openapi";

// The OpenAPI 3.1 document, generated from the zod schemas.
export const GET = withRoute({ auth: false, database: false, handler: async () => openApiDocument() });

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
