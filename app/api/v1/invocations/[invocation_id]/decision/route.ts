import { z } from "zod";
import { orNotFound } from "@/lib/errors";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import { awaitDecision, decisionQuerySchema, parseIfNoneMatch, decisionSchema } from "@/lib/invocations/decision-view";
import { idParamSchema } from "@/lib/outcome/record-fields";

// What the runtime may do next with its own invocation (docs/outcome-model.md §5). `?wait=N`
// holds the request up to N seconds until the decision changes; ETag and
// If-None-Match answer 304 when it has not. Another runtime's invocation is
// a 404, the same as one that does not exist.
export const GET = withRoute({
  auth: "runtime",
  hot: true,
  summary: "What the runtime may do next with its own invocation",
  description:
    "docs/outcome-model.md §5. Another runtime's invocation is a 404. `wait=N` holds the request up to N seconds until the decision, status, version or commit state changes (compared with If-None-Match when given, else with the state when the request arrived). The answer carries a strong ETag; If-None-Match naming it answers 304 (with `wait`, only once the wait ran out unchanged). Cache-Control: no-store.",
  tags: ["Guard"],
  errors: ["NOT_FOUND"],
  response: {
    200: { schema: decisionSchema, headers: { ETag: "The decision's strong ETag, for If-None-Match." } },
    304: { description: "Unchanged since the ETag in If-None-Match.", headers: { ETag: "The same ETag." } },
  },
  params: z.object({ invocation_id: idParamSchema }),
  query: decisionQuerySchema,
  handler: async ({ req, db, principal, params, query }) => {
    const answer = await awaitDecision(db, principal.runtime.id, params.invocation_id, {
      waitS: query.wait,
      ifNoneMatch: parseIfNoneMatch(req.headers.get("if-none-match")),
      signal: req.signal,
    });
    const found = orNotFound(answer, `No invocation ${params.invocation_id} in this runtime.`);
    const headers = { etag: found.etag, "cache-control": "no-store" };
    if (found.notModified) return new Response(null, { status: 304, headers });
    return json(found.view, 200, headers);
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
