import { actorOf, scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { listQueueTargets, queueFilterSchema, queueTargetsSchema } from "@/lib/queue/queue";

// "Select all matching this filter": up to 5,000 targets, each with its current version.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "Targets for 'select all matching this filter'",
  tags: ["Queue"],
  response: queueTargetsSchema,
  query: queueFilterSchema,
  handler: ({ db, principal, query }) =>
    listQueueTargets(db, query, {
      scope: scopeOf(principal),
      me: principal.kind === "user" ? actorOf(principal) : undefined,
    }),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
