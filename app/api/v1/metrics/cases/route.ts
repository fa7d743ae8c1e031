import { otherMethods, withRoute } from "@/lib/api/route";
import { listMetricCases } from "@/lib/domain/metrics";
import { metricCasesQuerySchema } from "@/lib/domain/metrics-schema";

// The invocations behind one number of GET /api/v1/metrics, for managers and admins.
export const GET = withRoute({
  auth: "user",
  permission: "manage",
  query: metricCasesQuerySchema,
  handler: ({ db, query }) => listMetricCases(db, query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
