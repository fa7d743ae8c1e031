import { listQuerySchema } from "@/lib/api/schemas";
import { otherMethods, withRoute } from "@/lib/api/route";
import { listInvocations } from "@/lib/domain/invocations";

// Invocations, newest activity first, filtered and cursor-paginated.
export const GET = withRoute({
  auth: true,
  query: listQuerySchema,
  handler: ({ db, principal, query }) => listInvocations(db, { runtimeId: principal.runtime.id }, query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
