import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { bulkActionRequestSchema, performBulkAction, bulkResultSchema } from "@/lib/queue/bulk-actions";

// One action on up to 100 invocations, each with its own version; a result per item.
export const POST = withRoute({
  auth: "user",
  permission: "act",
  summary: "One action on many invocations, with a result per item",
  tags: ["Invocations"],
  response: bulkResultSchema,
  body: bulkActionRequestSchema,
  handler: ({ db, principal, body }) => performBulkAction(db, body, actorOf(principal)),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
