// lib/ingest's public entry: all that other folders use of ingest (routes, OTLP, the guard, verifiers, the
// OpenAPI document). The rest of the folder is ingest's own, so it can change without them: the lint table
// (scripts/architecture/layers.mjs) lets no other folder import past this file.

export { MAX_BODY_BYTES, MAX_RECORDS, parseIngestBody, type ParsedBody } from "./read-body";
export {
  ingestPrepared,
  ingestRecords,
  type IngestOptions,
  type PreparedInput,
  type RuntimeRef,
} from "./process-batch";
export { ingestResultSchema, recordResultSchema, type IngestResult, type RecordResult } from "./result";
export {
  attemptLogLineSchema,
  contentHash,
  deriveInvocationId,
  ingestRecordSchema,
  prepareRecord,
  readArguments,
  type RecordProblem,
  type ToolReading,
  type VolatileArgsOf,
} from "./record";
export { isKnownEnvelope, normalizeEnvelope } from "./normalize";
export { summarizeCalls } from "./summarize";
export { normalizeVerifierAnswer, type VerifierEnvelope } from "./adapters/settle-verifier";
export { failureWithoutEvidence, isRecord, success, writeAheadIntent, type AdapterContext } from "./adapters/shared";
export { parseJsonObject } from "./adapters/wrapped-text";
