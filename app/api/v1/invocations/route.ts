import { scopeOf } from "@/lib/identity/principal";
import { listQuerySchema, invocationPageSchema } from "@/lib/invocations/schemas";
import { otherMethods, withRoute } from "@/lib/http/route";
import { listInvocations } from "@/lib/invocations/read";

// Invocations, newest activity first, filtered and cursor-paginated.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "List invocations",
  tags: ["Invocations"],
  response: invocationPageSchema,
  query: listQuerySchema,
  handler: ({ db, principal, query }) => listInvocations(db, scopeOf(principal), query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
