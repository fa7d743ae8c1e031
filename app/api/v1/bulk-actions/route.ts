import { actorOf } from "@/lib/api/auth";
import { otherMethods, withRoute } from "@/lib/api/route";
import { bulkActionRequestSchema, performBulkAction } from "@/lib/domain/bulk-actions";

// One action on up to 100 invocations, each with its own version; a result per item.
export const POST = withRoute({
  auth: "user",
  permission: "act",
  body: bulkActionRequestSchema,
  handler: ({ db, principal, body }) => performBulkAction(db, body, actorOf(principal)),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
