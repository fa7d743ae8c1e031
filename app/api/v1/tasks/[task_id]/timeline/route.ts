import { z } from "zod";
import { orNotFound, notVisible } from "@/lib/errors";
import { scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { getTaskStory } from "@/lib/invocations/task-page";
import { env } from "@/lib/env";
import { taskStorySchema } from "@/lib/http/schemas";
import { idParamSchema, runtimeChoiceSchema } from "@/lib/outcome/record-fields";

// A task's timeline events, oldest first: what the task page's story loads on
// demand, a page at a time, so the page itself stays small.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "A task's timeline events, oldest first",
  description:
    "The first `limit` events (records without envelopes, waits, actions, markers) of the task's timeline, `total` of them in all; `lanes` names the invocation of each event's `lane`.",
  tags: ["Tasks"],
  errors: ["NOT_FOUND"],
  response: taskStorySchema,
  params: z.object({ task_id: idParamSchema }),
  query: z.object({
    runtime: runtimeChoiceSchema,
    limit: z.coerce.number().int().min(1).max(5000).default(150).describe("How many events, from the first."),
  }),
  handler: async ({ db, principal, params, query }) => {
    const found = await getTaskStory(
      db,
      scopeOf(principal),
      params.task_id,
      query.runtime,
      query.limit,
      env().SETTLE_STALL_WINDOW_S,
    );
    return orNotFound(found, notVisible("task", params.task_id, query.runtime));
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
