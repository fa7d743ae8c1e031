import { otherMethods, withRoute } from "@/lib/http/route";
import { answerTraceExport, traceExportRoute } from "@/lib/otlp/read-body";

// OTLP/HTTP trace export under Settle's API (OTEL_EXPORTER_OTLP_ENDPOINT=<settle>/api/v1/otlp); the same as /v1/traces.
export const POST = withRoute({
  ...traceExportRoute,
  hot: true,
  handler: ({ req, db, principal }) => answerTraceExport(db, principal, req),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
