import { z } from "zod";
import { orNotFound, notVisible } from "@/lib/errors";
import { scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { getTask } from "@/lib/invocations/read";
import { taskSchema } from "@/lib/invocations/schemas";
import { idParamSchema, runtimeChoiceSchema } from "@/lib/outcome/record-fields";

// A task and its invocations. `runtime` names the runtime when the same task
// id exists in several.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "A task and its invocations",
  tags: ["Tasks"],
  errors: ["NOT_FOUND"],
  response: taskSchema,
  params: z.object({ task_id: idParamSchema }),
  query: z.object({
    runtime: runtimeChoiceSchema,
  }),
  handler: async ({ db, principal, params, query }) => {
    const found = await getTask(db, scopeOf(principal), params.task_id, { runtime: query.runtime });
    return orNotFound(found, notVisible("task", params.task_id, query.runtime));
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
