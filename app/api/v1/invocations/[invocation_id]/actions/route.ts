import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { actionRequestSchema, performAction } from "@/lib/invocations/act";
import { invocationSchema } from "@/lib/invocations/schemas";
import { idParamSchema } from "@/lib/outcome/record-fields";

// An operator's action on an invocation, checked against the version they saw.
export const POST = withRoute({
  auth: "user",
  permission: "act",
  summary: "Act on an invocation",
  description:
    "Checked against the version you saw (409 VERSION_CONFLICT otherwise) and the transitions docs/outcome-model.md §4 allows (409 TRANSITION_REFUSED). Approve with `arguments` to approve edited arguments (400 INVALID_REQUEST when they hold a redacted or secret-looking value); reject and escalate may carry a `reply` to the agent.",
  tags: ["Invocations"],
  errors: ["NOT_FOUND", "VERSION_CONFLICT", "TRANSITION_REFUSED", "ALREADY_APPROVED", "INVALID_REQUEST"],
  response: { 200: { description: "The updated invocation.", schema: invocationSchema } },
  params: z.object({ invocation_id: idParamSchema }),
  body: actionRequestSchema,
  // Edited arguments keep an integer past 2^53 to the digit, as the call's own did at ingest: the approval binds to them.
  exactIn: ["arguments"],
  handler: ({ db, principal, params, body }) => performAction(db, params.invocation_id, body, actorOf(principal)),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
