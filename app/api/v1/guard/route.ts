import { otherMethods, withRoute } from "@/lib/http/route";
import { guardRequestSchema, guardWrite } from "@/lib/guard/guard";

// Asked by a runtime before a write: allows it and records the intent, or
// denies it (already committed, outcome unknown, in flight). Always 200.
export const POST = withRoute({
  auth: "runtime",
  body: guardRequestSchema,
  handler: ({ db, principal, body }) => guardWrite(db, principal.runtime, body),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
