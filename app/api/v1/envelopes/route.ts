import { z } from "zod";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import {
  attemptLogLineSchema,
  ingestRecords,
  ingestRecordSchema,
  ingestResultSchema,
  parseIngestBody,
} from "@/lib/ingest";

// Ingest attempt records from a runtime: one result per record, HTTP 207.
// The body is read by parseIngestBody (JSON or NDJSON, up to 1 MiB), so it is
// declared as requestContent rather than parsed by the wrapper.
export const POST = withRoute({
  auth: "runtime",
  hot: true,
  summary: "Ingest attempt records",
  description:
    'One record, {"records": [...]} (at most 500), or application/x-ndjson. Body at most 1 MiB. Idempotent by event_id.',
  tags: ["Ingest"],
  errors: ["INVALID_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE", "TOO_MANY_RECORDS"],
  requestContent: {
    "application/json": z.union([
      ingestRecordSchema,
      attemptLogLineSchema,
      z.object({ records: z.array(ingestRecordSchema).max(500) }),
    ]),
    "application/x-ndjson": z.string().describe("One record per line."),
  },
  response: { 207: { description: "One result per record, in order.", schema: ingestResultSchema } },
  handler: async ({ req, db, principal }) => {
    const { records, lineErrors, longIntegers } = await parseIngestBody(req);
    const result = await ingestRecords(db, principal.runtime, records, new Date(), lineErrors, { longIntegers });
    return json(result, 207);
  },
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
