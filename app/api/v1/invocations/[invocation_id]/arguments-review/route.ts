import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { argumentsReviewRequestSchema, checkRanArguments } from "@/lib/invocations/arguments-review";
import { invocationSchema } from "@/lib/invocations/schemas";
import { idParamSchema } from "@/lib/outcome/record-fields";

// A person checked what a call ran with when it ran with other arguments than were approved.
export const POST = withRoute({
  auth: "user",
  permission: "act",
  summary: "Say you checked what ran, when a call ran with other arguments than approved",
  description:
    "For an invocation with `arguments_review: open` (after an approval, a record reported other arguments than those approved; it waits in the queue whatever its status). The note says what was found. Audited; the status does not change; it leaves the queue. 409 TRANSITION_REFUSED when there is nothing open to check.",
  tags: ["Invocations"],
  errors: ["NOT_FOUND", "TRANSITION_REFUSED"],
  response: { 200: { description: "The invocation after the check.", schema: invocationSchema } },
  params: z.object({ invocation_id: idParamSchema }),
  body: argumentsReviewRequestSchema,
  handler: ({ db, principal, params, body }) => checkRanArguments(db, params.invocation_id, body, actorOf(principal)),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
