import { z } from "zod";
import { orNotFound, notVisible } from "@/lib/errors";
import { scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { getInvocation } from "@/lib/invocations/read";
import { invocationSchema } from "@/lib/invocations/schemas";
import { idParamSchema, runtimeChoiceSchema } from "@/lib/outcome/record-fields";

// One invocation with its attempts and audit trail. `runtime` names the
// runtime when the same invocation id exists in several.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "An invocation with its attempts and audit trail",
  description: "Its latest 200 attempts, with attempts_total and, when there are more, attempts_earlier.",
  tags: ["Invocations"],
  errors: ["NOT_FOUND"],
  response: invocationSchema,
  params: z.object({ invocation_id: idParamSchema }),
  query: z.object({
    runtime: runtimeChoiceSchema,
  }),
  handler: async ({ db, principal, params, query }) => {
    const found = await getInvocation(db, scopeOf(principal), params.invocation_id, { runtime: query.runtime });
    return orNotFound(found, notVisible("invocation", params.invocation_id, query.runtime));
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
