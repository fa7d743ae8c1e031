import { otherMethods, withRoute } from "@/lib/http/route";
import { answerTraceExport, traceExportRoute } from "@/lib/otlp/read-body";

// OTLP/HTTP's own path, where an exporter pointed at Settle's base address
// (OTEL_EXPORTER_OTLP_ENDPOINT) sends its traces. Also at /api/v1/otlp/v1/traces.
export const POST = withRoute({
  ...traceExportRoute,
  hot: true,
  handler: ({ req, db, principal }) => answerTraceExport(db, principal, req),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
