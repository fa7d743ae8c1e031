import { actorOf, scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { listQueue, queueQuerySchema, queuePageSchema } from "@/lib/queue/queue";

// The queue: everything that needs a person, headline first; keyset pages with a total.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "Everything that needs a person, headline first",
  tags: ["Queue"],
  response: queuePageSchema,
  query: queueQuerySchema,
  handler: ({ db, principal, query }) =>
    listQueue(db, query, { scope: scopeOf(principal), me: principal.kind === "user" ? actorOf(principal) : undefined }),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
