import { otherMethods, withRoute } from "@/lib/http/route";
import { listMetricCases } from "@/lib/metrics/metrics";
import { metricCasesQuerySchema } from "@/lib/metrics/schema";

// The invocations behind one number of GET /api/v1/metrics, for managers and admins.
export const GET = withRoute({
  auth: "user",
  permission: "manage",
  query: metricCasesQuerySchema,
  handler: ({ db, query }) => listMetricCases(db, query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
