import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { actionRequestSchema, performAction } from "@/lib/invocations/act";

// An operator's action on an invocation, checked against the version they saw.
export const POST = withRoute({
  auth: "user",
  permission: "act",
  params: z.object({ invocation_id: z.string().min(1).max(512) }),
  body: actionRequestSchema,
  handler: ({ db, principal, params, body }) => performAction(db, params.invocation_id, body, actorOf(principal)),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
