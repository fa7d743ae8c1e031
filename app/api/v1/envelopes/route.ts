import { json, otherMethods, withRoute } from "@/lib/http/route";
import { parseIngestBody } from "@/lib/ingest/parse-body";
import { ingestRecords } from "@/lib/ingest/process-batch";

// Ingest attempt records from a runtime: one result per record, HTTP 207.
export const POST = withRoute({
  auth: "runtime",
  handler: async ({ req, db, principal }) => {
    const { records, lineErrors } = await parseIngestBody(req);
    const result = await ingestRecords(db, principal.runtime, records, new Date(), lineErrors);
    return json(result, 207);
  },
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
