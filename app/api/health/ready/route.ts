import { otherMethods, withRoute } from "@/lib/http/route";
import { readinessSchema } from "@/lib/http/schemas";
import { checkReadiness } from "@/lib/db/health";

// Readiness: the database answers and every migration is applied; else 503
// DATABASE_UNAVAILABLE or MIGRATIONS_PENDING, so a load balancer sends no traffic here yet.
export const GET = withRoute({
  auth: false,
  summary: "Readiness: the database is reachable and its migrations are applied",
  tags: ["Meta"],
  response: readinessSchema,
  handler: ({ db }) => checkReadiness(db),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
