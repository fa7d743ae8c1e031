import { z } from "zod";
import { ApiError } from "@/lib/errors";
import { scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { getInvocation } from "@/lib/invocations/read";
import { invocationSchema } from "@/lib/invocations/schemas";
import { idParamSchema, runtimeNameSchema } from "@/lib/outcome/record-fields";

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
    runtime: runtimeNameSchema.optional().describe("The runtime's name, when several runtimes use this invocation id."),
  }),
  handler: async ({ db, principal, params, query }) => {
    const found = await getInvocation(db, scopeOf(principal), params.invocation_id, { runtime: query.runtime });
    if (!found)
      throw new ApiError(
        "NOT_FOUND",
        `No invocation ${params.invocation_id}${query.runtime ? ` in runtime ${query.runtime}` : ""} that you can see.`,
      );
    return found;
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
