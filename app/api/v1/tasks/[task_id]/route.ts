import { z } from "zod";
import { ApiError } from "@/lib/api/errors";
import { scopeOf } from "@/lib/api/auth";
import { otherMethods, withRoute } from "@/lib/api/route";
import { getTask } from "@/lib/domain/invocations";

// A task and its invocations.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  params: z.object({ task_id: z.string().min(1).max(512) }),
  handler: async ({ db, principal, params }) => {
    const found = await getTask(db, scopeOf(principal), params.task_id);
    if (!found) throw new ApiError("NOT_FOUND", `No task ${params.task_id} that you can see.`);
    return found;
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
