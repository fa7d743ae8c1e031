import { otherMethods, withRoute } from "@/lib/http/route";
import { listMetricCases } from "@/lib/metrics/metrics";
import { metricCasesQuerySchema, metricCasesPageSchema } from "@/lib/metrics/schema";

// The invocations behind one number of GET /api/v1/metrics, for managers and admins.
export const GET = withRoute({
  auth: "user",
  permission: "manage",
  summary: "The invocations behind one number of the metrics (managers and admins)",
  tags: ["Metrics"],
  errors: ["NOT_FOUND"],
  response: metricCasesPageSchema,
  query: metricCasesQuerySchema,
  handler: ({ db, query }) => listMetricCases(db, query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
