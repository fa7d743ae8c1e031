import { errorResponse } from "@/lib/http/route";

// Unknown API paths answer with the error envelope, never an HTML page.
function notFound(req: Request): Response {
  return errorResponse(
    "NOT_FOUND",
    `No API at ${new URL(req.url).pathname}. See /api/v1/openapi.json.`,
    "req_unrouted",
  );
}

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
