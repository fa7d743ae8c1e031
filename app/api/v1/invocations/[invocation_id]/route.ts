import { z } from "zod";
import { ApiError } from "@/lib/api/errors";
import { scopeOf } from "@/lib/api/auth";
import { otherMethods, withRoute } from "@/lib/api/route";
import { getInvocation } from "@/lib/domain/invocations";

// One invocation with its attempts and audit trail.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  params: z.object({ invocation_id: z.string().min(1).max(512) }),
  handler: async ({ db, principal, params }) => {
    const found = await getInvocation(db, scopeOf(principal), params.invocation_id);
    if (!found) throw new ApiError("NOT_FOUND", `No invocation ${params.invocation_id} that you can see.`);
    return found;
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
