import { z } from "zod";
import { ApiError } from "@/lib/errors";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import { awaitDecision, decisionQuerySchema, parseIfNoneMatch } from "@/lib/invocations/decision-view";

// What the runtime may do next with its own invocation (SPEC §5). `?wait=N`
// holds the request up to N seconds until the decision changes; ETag and
// If-None-Match answer 304 when it has not. Another runtime's invocation is
// a 404, the same as one that does not exist.
export const GET = withRoute({
  auth: "runtime",
  params: z.object({ invocation_id: z.string().min(1).max(512) }),
  query: decisionQuerySchema,
  handler: async ({ req, db, principal, params, query }) => {
    const answer = await awaitDecision(db, principal.runtime.id, params.invocation_id, {
      waitS: query.wait,
      ifNoneMatch: parseIfNoneMatch(req.headers.get("if-none-match")),
      signal: req.signal,
    });
    if (!answer) throw new ApiError("NOT_FOUND", `No invocation ${params.invocation_id} in this runtime.`);
    const headers = { etag: answer.etag, "cache-control": "no-store" };
    if (answer.notModified) return new Response(null, { status: 304, headers });
    return json(answer.view, 200, headers);
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
