import { otherMethods, withRoute } from "@/lib/http/route";
import { getMetrics } from "@/lib/metrics/metrics";
import { metricsCsv } from "@/lib/metrics/csv";
import { metricsQuerySchema, metricsSchema } from "@/lib/metrics/schema";
import { csvSchema } from "@/lib/http/schemas";

// Trust metrics over [from, to) for managers and admins; `?format=csv` downloads them per tool.
export const GET = withRoute({
  auth: "user",
  permission: "manage",
  summary: "Trust metrics over [from, to) (managers and admins)",
  description:
    "docs/outcome-model.md §6, per tool and runtime, with a per-tool breakdown and a series per hour (ranges up to 2 days) or day. `format=csv`: one row per tool and one for all tools. Runtime keys get 403.",
  tags: ["Metrics"],
  errors: ["NOT_FOUND"],
  response: { 200: { schema: metricsSchema, content: { "text/csv": csvSchema } } },
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
