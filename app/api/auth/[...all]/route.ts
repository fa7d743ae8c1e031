import { toNextJsHandler } from "better-auth/next-js";
import { getAuth } from "@/lib/auth/server";
import { toErrorResponse } from "@/lib/api/route";

// Better Auth's endpoints (sign-in, sign-out, session, admin), behind the same
// error mapping as every other route when the database is down.
async function handle(req: Request): Promise<Response> {
  try {
    const handlers = toNextJsHandler(await getAuth());
    return await (req.method === "GET" ? handlers.GET(req) : handlers.POST(req));
  } catch (error) {
    return toErrorResponse(error, "req_auth");
  }
}

export { handle as GET, handle as POST };
