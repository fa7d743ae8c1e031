import { z } from "zod";
import { errorEnvelopeSchema } from "../errors";
import { ignoredHintSchema } from "../outcome/vocabulary";

// What POST /api/v1/envelopes answers (207), one result per record in order: the contract (OpenAPI, the CLI's
// reading of it) and the type ingest builds (process-batch.ts), from one schema.

export const recordResultSchema = z.object({
  index: z.number().int(),
  status: z.enum(["accepted", "duplicate", "rejected"]),
  event_id: z.string().nullable(),
  invocation_id: z.string().nullable(),
  ignored: z
    .array(ignoredHintSchema)
    .optional()
    .describe("Accepted, but these hints in its envelope were left out of the reading."),
  error: errorEnvelopeSchema.optional(),
});

export const ingestResultSchema = z
  .object({
    results: z.array(recordResultSchema),
    accepted: z.number().int(),
    duplicates: z.number().int(),
    rejected: z.number().int(),
  })
  .meta({ id: "IngestResult" });

export type RecordResult = z.infer<typeof recordResultSchema>;
export type IngestResult = z.infer<typeof ingestResultSchema>;
