import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { getRetention, putDefaultRetention, retentionInputSchema, retentionSchema } from "@/lib/retention/settings";

// How long settled history is kept, per runtime, and what retention archived lately; anyone signed in may read it.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  summary: "How long settled history is kept, for every runtime, and the latest archives",
  tags: ["Retention"],
  response: retentionSchema,
  handler: ({ db }) => getRetention(db),
});

// Admins set the default period (runtimes without their own row use it).
export const PUT = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Set the default retention period (admins)",
  description:
    "Settled invocations keep their attempts and envelopes for attempts_days after they settled, and their audit trail for audit_days. Nothing that is not settled, in an open conflict or under review ever leaves, and the metrics' rollups are kept.",
  tags: ["Retention"],
  response: { 200: { description: "Retention now in effect.", schema: retentionSchema } },
  body: retentionInputSchema,
  handler: ({ db, principal, body }) => putDefaultRetention(db, body, actorOf(principal)),
});

export const { POST, PATCH, DELETE } = otherMethods("GET", "PUT");
