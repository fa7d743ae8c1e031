import { z } from "zod";
import { ApiError } from "@/lib/api/errors";
import { otherMethods, withRoute } from "@/lib/api/route";
import { getInvocation } from "@/lib/domain/invocations";

// One invocation with its attempts and audit trail.
export const GET = withRoute({
  auth: true,
  params: z.object({ invocation_id: z.string().min(1).max(512) }),
  handler: async ({ db, principal, params }) => {
    const found = await getInvocation(db, { runtimeId: principal.runtime.id }, params.invocation_id);
    if (!found) throw new ApiError("NOT_FOUND", `No invocation ${params.invocation_id} for this runtime.`);
    return found;
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
