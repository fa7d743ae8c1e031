import { z } from "zod";
import { orNotFound, notVisible } from "@/lib/errors";
import { scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { listAttempts } from "@/lib/invocations/read";
import { getRuntimeScope } from "@/lib/invocations/read";
import { attemptPageSchema } from "@/lib/invocations/schemas";
import { idParamSchema, runtimeChoiceSchema } from "@/lib/outcome/record-fields";

// An invocation's attempts a page at a time, newest pages first: the
// invocation itself carries the latest ones and `attempts_earlier`.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "An invocation's attempts, a page at a time",
  tags: ["Invocations"],
  errors: ["NOT_FOUND"],
  response: attemptPageSchema,
  params: z.object({ invocation_id: idParamSchema }),
  query: z.object({
    runtime: runtimeChoiceSchema,
    before: z
      .string()
      .max(2048)
      .optional()
      .describe("`attempts_earlier` of the invocation, or `earlier` of a page; left out, the latest page."),
    limit: z.coerce.number().int().min(1).max(500).default(200),
  }),
  handler: async ({ db, principal, params, query }) => {
    const scope = await getRuntimeScope(db, scopeOf(principal), query.runtime);
    const page = scope ? await listAttempts(db, scope, params.invocation_id, query) : null;
    return orNotFound(page, notVisible("invocation", params.invocation_id, query.runtime));
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
