import "server-only";
import type { Db } from "../db/client";
import { ingestPrepared } from "../ingest/process-batch";
import type { PreparedRecord } from "../ingest/record";
import { normalizeVerifierAnswer, type VerifierEnvelope } from "../ingest/adapters/settle-verifier";
import type { EffectClass, ProbeResult } from "../outcome/vocabulary";

// A verifier's settling answer enters Settle as every piece of evidence does: a probe record through ingest's
// one entry, folded with the rest (so a finding that contradicts a person's settlement is an evidence conflict,
// never an overwrite). Its event id names the request and the try (or `gave-up`), so an answer sent twice is stored once.

export type AskedInvocation = {
  runtimeId: string;
  runtime: string;
  invocationId: string;
  taskId: string;
  tool: string;
  effectClass: string | null;
  idempotencyKey: string | null;
  /** The attempt the request asked about: the verifier's finding speaks for it, not for a later one. */
  attempt: number;
};

export async function recordVerifierProbe(
  db: Db,
  inv: AskedInvocation,
  envelope: VerifierEnvelope,
  probe: ProbeResult,
  now: Date,
  step: string = String(envelope.settle_verification.try),
): Promise<void> {
  const eventKey = `settle-verifier:${envelope.settle_verification.id}:${step}`;
  const prepared: PreparedRecord = {
    eventKey,
    eventId: eventKey,
    taskId: inv.taskId,
    invocationId: inv.invocationId,
    attemptId: null,
    attemptNo: inv.attempt,
    tool: inv.tool,
    phase: "probe",
    at: now.toISOString(),
    effectClass: inv.effectClass as EffectClass | null,
    idempotencyKey: inv.idempotencyKey,
    budgetLeftS: null,
    argsDigest: null,
    arguments: null,
    normalized: normalizeVerifierAnswer(envelope, probe),
    probeResult: probe,
    envelope,
  };
  const result = await ingestPrepared(db, { id: inv.runtimeId, name: inv.runtime }, [
    { prepared, givenEventId: eventKey },
  ]);
  const rejected = result.results.find((r) => r.status === "rejected");
  if (rejected) throw new Error(`the verifier's probe was refused: ${JSON.stringify(rejected.error)}`);
}
