import { otherMethods, withRoute } from "@/lib/http/route";
import { openApiDocument } from "@/lib/http/openapi";

// The OpenAPI 3.1 document, generated from the zod schemas.
export const GET = withRoute({ auth: false, database: false, handler: async () => openApiDocument() });

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
