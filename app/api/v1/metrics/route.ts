import { otherMethods, withRoute } from "@/lib/http/route";
import { getMetrics } from "@/lib/metrics/metrics";
import { metricsCsv } from "@/lib/metrics/csv";
import { metricsQuerySchema } from "@/lib/metrics/schema";

// Trust metrics over [from, to) for managers and admins; `?format=csv` downloads them per tool.
export const GET = withRoute({
  auth: "user",
  permission: "manage",
  query: metricsQuerySchema,
  handler: async ({ db, query: { format, ...range } }) => {
    const metrics = await getMetrics(db, range);
    if (format === "json") return metrics;
    const csv = metricsCsv(metrics);
    return new Response(csv.body, {
      headers: {
        "content-type": "text/csv; charset=utf-8; header=present",
        "content-disposition": `attachment; filename="${csv.filename}"`,
        "cache-control": "no-store",
      },
    });
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
