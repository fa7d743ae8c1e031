import type { EffectClass, NormalizedAttempt, Phase, ProbeResult } from "../outcome/vocabulary";

// A record as the write path stores it: one attempt of one invocation, read and redacted by its writer
// (an ingest record, lib/ingest/record.ts; a span's attempt, lib/otlp; a verifier's answer, lib/verify;
// the guard's intent, lib/guard), and folded and written here (store-records.ts).

export type PreparedRecord = {
  eventKey: string;
  eventId: string | null;
  taskId: string;
  invocationId: string;
  attemptId: string | null;
  attemptNo: number | null;
  tool: string;
  phase: Phase;
  at: string;
  effectClass: EffectClass | null;
  idempotencyKey: string | null;
  budgetLeftS: number | null;
  argsDigest: string | null;
  /** The call's arguments as stored (secrets redacted), or null. */
  arguments: unknown;
  /** One line saying what the call was, from its catalog entry's template and the stored arguments; set at storing. */
  summary: string | null;
  normalized: NormalizedAttempt;
  probeResult: ProbeResult | null;
  envelope: unknown;
};
