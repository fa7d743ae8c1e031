import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { scrapeMetrics } from "@/lib/observability/scrape";

// Prometheus metrics: request latency, ingest counts, and the queue, unknown,
// verification and webhook backlogs read from the database. Served here and
// at /metrics, where scrapers look by default (proxy.ts sends a request for
// /metrics that does not ask for a page here; a browser gets the console's
// metrics page). Behind SETTLE_METRICS_TOKEN (a bearer token); without one
// configured it answers 404, so nothing is exposed by default.
export const GET = withRoute({
  auth: false,
  summary: "Prometheus metrics (text exposition format), with the bearer token SETTLE_METRICS_TOKEN",
  tags: ["Meta"],
  errors: ["UNAUTHENTICATED", "NOT_FOUND"],
  response: { 200: { content: { "text/plain": z.string() } } },
  handler: ({ req, db }) => scrapeMetrics(db, req.headers.get("authorization")),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
