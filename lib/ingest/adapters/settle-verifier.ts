import type { NormalizedAttempt, ProbeResult, SafeValue } from "../../outcome/vocabulary";

// A verifier's answer (lib/verify) read as a probe of dialect `settle-verifier`. Not among the adapters
// ingest tries on an envelope: a runtime's own record can never pass for Settle's request and its answer.

/** What Settle stores as the probe's envelope: the answer, and who gave it to which request. */
export type VerifierEnvelope = {
  settle_verification: { id: string; try: number; answered_by: string; via: "api" | "webhook" | "settle" };
  found: boolean | null;
  evidence: string | null;
  ref: string | null;
};

const readings: Record<ProbeResult, Pick<NormalizedAttempt, "outcome" | "commit_state" | "next_action">> = {
  found: { outcome: "ok", commit_state: "committed", next_action: "none" },
  absent: { outcome: "permanent", commit_state: "not_committed", next_action: "wait_and_retry" },
  failed: { outcome: "unknown", commit_state: "unknown", next_action: "escalate" },
};

export function normalizeVerifierAnswer(envelope: VerifierEnvelope, probe: ProbeResult): NormalizedAttempt {
  const details: Record<string, SafeValue> = {
    verification_id: envelope.settle_verification.id,
    try: envelope.settle_verification.try,
    answered_by: envelope.settle_verification.answered_by,
    via: envelope.settle_verification.via,
    found: envelope.found,
  };
  if (envelope.ref) details.ref = envelope.ref;
  return {
    dialect: "settle-verifier",
    wrapper_dialect: null,
    ...readings[probe],
    code: null,
    category: null,
    retry: { directive: probe === "absent" ? "allowed" : "never", not_before: null, max_attempts_remaining: null },
    dispatch_stage: null,
    safe_details: details,
    agent_message: envelope.evidence,
    user_message: null,
    items: [],
  };
}
