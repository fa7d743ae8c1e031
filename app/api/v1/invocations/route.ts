import { scopeOf } from "@/lib/api/auth";
import { listQuerySchema } from "@/lib/api/schemas";
import { otherMethods, withRoute } from "@/lib/api/route";
import { listInvocations } from "@/lib/domain/invocations";

// Invocations, newest activity first, filtered and cursor-paginated.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  query: listQuerySchema,
  handler: ({ db, principal, query }) => listInvocations(db, scopeOf(principal), query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
