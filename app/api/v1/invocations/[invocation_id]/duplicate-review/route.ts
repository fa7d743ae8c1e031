import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { duplicateReviewRequestSchema, reviewPossibleDuplicate } from "@/lib/invocations/duplicate-review";
import { invocationSchema } from "@/lib/invocations/schemas";
import { idParamSchema } from "@/lib/outcome/record-fields";

// An operator confirms (noted) or dismisses (its key cleared) a possible duplicate effect flagged after the fact.
export const POST = withRoute({
  auth: "user",
  permission: "act",
  summary: "Confirm or dismiss a possible duplicate effect",
  description:
    "For an invocation flagged `possible_duplicate_of` an earlier one (same runtime, tool and arguments under another key, seen without the guard). `confirmed` needs a note saying what was done (e.g. refunded re_123); `dismissed` clears its key against the earlier invocation, so the guard allows it. Audited; the status does not change. 409 TRANSITION_REFUSED when there is nothing open to review.",
  tags: ["Invocations"],
  errors: ["NOT_FOUND", "TRANSITION_REFUSED"],
  response: { 200: { description: "The invocation after the review.", schema: invocationSchema } },
  params: z.object({ invocation_id: idParamSchema }),
  body: duplicateReviewRequestSchema,
  handler: ({ db, principal, params, body }) =>
    reviewPossibleDuplicate(db, params.invocation_id, body, actorOf(principal)),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
