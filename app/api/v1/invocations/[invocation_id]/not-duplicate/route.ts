import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { clearPossibleDuplicate, notDuplicateRequestSchema } from "@/lib/invocations/duplicate-review";
import { invocationSchema } from "@/lib/invocations/schemas";
import { idParamSchema } from "@/lib/outcome/record-fields";

// "Not a duplicate": a write the guard refused as a possible duplicate of this invocation may go out.
export const POST = withRoute({
  auth: "user",
  permission: "act",
  summary: "Mark a refused write not a duplicate of this invocation",
  description:
    "The guard refused a write under `idempotency_key` as a possible duplicate of this invocation (same tool and arguments); from now on it allows that key with these arguments, and records under it are not flagged against this invocation. Audited on this invocation; marking a key twice changes nothing.",
  tags: ["Invocations"],
  errors: ["NOT_FOUND"],
  response: {
    200: { description: "This invocation, its refusals showing the key cleared.", schema: invocationSchema },
  },
  params: z.object({ invocation_id: idParamSchema }),
  body: notDuplicateRequestSchema,
  handler: ({ db, principal, params, body }) =>
    clearPossibleDuplicate(db, params.invocation_id, body, actorOf(principal)),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
