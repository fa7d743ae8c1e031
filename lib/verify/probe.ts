import "server-only";
import type { Db } from "../db/client";
import { ingestPrepared, type PreparedInput, normalizeVerifierAnswer, type VerifierEnvelope } from "../ingest";
import { catalogOnce, toolReadingOf } from "../catalog/load";
import type { PreparedRecord } from "../write/prepared-record";
import type { EffectClass, ProbeResult } from "../outcome/vocabulary";
import type { AskedRow, RequestRow } from "./queries";

// A verifier's settling answer enters Settle as every piece of evidence does: a probe record through ingest's
// one entry, folded with the rest (so a finding that contradicts a person's settlement is an evidence conflict,
// never an overwrite). Its event id names the request and the try (or `gave-up`), so an answer sent twice is stored once.

/** The request and the invocation it asks about, as the queries read them. */
type Asked = Pick<
  RequestRow & AskedRow,
  "runtime_id" | "runtime" | "invocation_id" | "task_id" | "tool" | "effect_class" | "idempotency_key" | "attempt"
>;

/** The answer as a probe record of dialect `settle-verifier`, ready for ingest. */
export function verifierProbeInput(
  inv: Asked,
  envelope: VerifierEnvelope,
  probe: ProbeResult,
  now: Date,
  step: string = String(envelope.settle_verification.try),
): PreparedInput {
  const eventKey = `settle-verifier:${envelope.settle_verification.id}:${step}`;
  const prepared: PreparedRecord = {
    eventKey,
    eventId: eventKey,
    taskId: inv.task_id,
    invocationId: inv.invocation_id,
    attemptId: null,
    attemptNo: inv.attempt,
    tool: inv.tool,
    phase: "probe",
    at: now.toISOString(),
    effectClass: inv.effect_class as EffectClass | null,
    idempotencyKey: inv.idempotency_key,
    budgetLeftS: null,
    argsDigest: null,
    arguments: null,
    summary: null,
    normalized: normalizeVerifierAnswer(envelope, probe),
    probeResult: probe,
    envelope,
  };
  return { prepared, givenEventId: eventKey };
}

/** Stores answers of one runtime in one ingest call; the indexes of the ones ingest refused, with why. */
export async function recordVerifierProbes(
  db: Db,
  runtime: { id: string; name: string },
  inputs: PreparedInput[],
): Promise<Map<number, string>> {
  if (inputs.length === 0) return new Map();
  // A call stored before its tool had a catalog entry has no class: its answer takes the entry's, as any record would.
  const catalog = catalogOnce(db, runtime.id);
  if (inputs.some((i) => "eventKey" in i.prepared && i.prepared.effectClass === null)) {
    const tools = toolReadingOf(await catalog());
    for (const { prepared } of inputs) {
      if ("eventKey" in prepared && prepared.effectClass === null)
        prepared.effectClass = tools.effectClass(prepared.tool);
    }
  }
  const result = await ingestPrepared(db, runtime, inputs, catalog);
  return new Map(
    result.results.filter((r) => r.status === "rejected").map((r) => [r.index, JSON.stringify(r.error)] as const),
  );
}

export async function recordVerifierProbe(
  db: Db,
  inv: Asked,
  envelope: VerifierEnvelope,
  probe: ProbeResult,
  now: Date,
  step?: string,
): Promise<void> {
  const refused = await recordVerifierProbes(db, { id: inv.runtime_id, name: inv.runtime }, [
    verifierProbeInput(inv, envelope, probe, now, step),
  ]);
  for (const why of refused.values()) throw new Error(`the verifier's probe was refused: ${why}`);
}
