import { probeEnvelope, type ProbeFinding } from "../classify.js";
import type { SettleClient } from "../client.js";
import type { GuardAnswer } from "../types.js";

// Seed 002's "a retry is a guess, a probe is a measurement" for framework
// adapters: when the guard refuses a call because an earlier identical one has
// an unknown outcome, the runtime's own lookup (the `probe` option) is asked
// whether it landed, and its finding is posted as a probe record: found settles
// the call as committed (the model is told it already took effect), absent
// lets the same invocation run again with the same key.

export type Probe = (call: { tool: string; args: unknown; idempotencyKey: string }) => Promise<ProbeFinding<unknown>>;

/** Probes the invocation that blocks a call; "found", "absent", or null when nothing was measured. */
export async function probeBlocking(
  client: SettleClient,
  probe: Probe,
  call: { tool: string; args: unknown; taskId: string; idempotencyKey: string },
  denied: GuardAnswer,
): Promise<"found" | "absent" | null> {
  const inv = denied.invocation_id;
  const decision = await client.getDecision(inv).catch(() => null);
  const unsettled =
    decision?.decision === "verify" || decision?.status === "outcome_unknown" || decision?.status === "stalled";
  if (!decision || !unsettled) return null;
  let finding: ProbeFinding<unknown> | { failed: unknown };
  try {
    finding = await probe({ tool: call.tool, args: call.args, idempotencyKey: call.idempotencyKey });
  } catch (error) {
    finding = { failed: error };
  }
  const attempt = Math.max(denied.attempt, 1);
  try {
    await client.report({
      event_id: `${inv}:a${attempt}:probe:v${decision.version}`,
      task_id: call.taskId,
      invocation_id: inv,
      attempt,
      attempt_id: `${inv}:a${attempt}`,
      tool: call.tool,
      phase: "probe",
      at: new Date().toISOString(),
      idempotency_key: call.idempotencyKey,
      envelope: probeEnvelope(finding),
    });
  } catch {
    return null;
  }
  if ("failed" in finding) return null;
  return finding.found ? "found" : "absent";
}
