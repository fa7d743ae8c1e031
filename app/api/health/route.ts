import { otherMethods, withRoute } from "@/lib/http/route";
import { healthSchema } from "@/lib/http/schemas";
import { checkHealth } from "@/lib/db/health";

// Liveness of Settle and its database; 503 with the error envelope when the database is down.
export const GET = withRoute({
  auth: false,
  summary: "Health of Settle and its database",
  tags: ["Meta"],
  response: healthSchema,
  handler: ({ db }) => checkHealth(db),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
