import type { EffectClass } from "./types.js";

// What a tool call produced, turned into a source article 002 (docs/outcome-model.md) outcome envelope — the
// closed vocabulary Settle reads (ok | retryable | permanent | unknown, with
// an explicit effect flag). The default never claims more than it saw: a
// write that threw or ran out of time may have landed, so it is `unknown`.

export type CallResult<R> =
  { kind: "returned"; value: R } | { kind: "threw"; error: unknown } | { kind: "timed_out"; afterMs: number };

export type ClassifyContext = { tool: string; effectClass: EffectClass; attempt: number; attemptId: string };

/** A source article 002 (docs/outcome-model.md) outcome envelope (docs/outcome-model.md §3). */
export type Seed002Envelope = {
  outcome: "ok" | "retryable" | "permanent" | "unknown";
  effect_applied: "yes" | "no" | "partial" | "unknown";
  attempt_id?: string;
  retry_after_s?: number | null;
  message?: string;
  items?: Array<{ id: string; applied: "yes" | "no" | "unknown"; reason?: string }>;
};

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

export function classifyResult<R>(result: CallResult<R>, context: ClassifyContext): Seed002Envelope {
  const attempt_id = context.attemptId;
  if (result.kind === "returned") return { outcome: "ok", effect_applied: "yes", attempt_id };
  const message =
    result.kind === "threw"
      ? messageOf(result.error)
      : `no answer within ${result.afterMs} ms; the call may still complete`;
  // A failed read changed nothing; a failed write may have changed everything.
  if (context.effectClass === "read") return { outcome: "retryable", effect_applied: "no", attempt_id, message };
  return { outcome: "unknown", effect_applied: "unknown", attempt_id, message };
}

/** What a probe (a read that looks the effect up by idempotency key) found. */
export type ProbeFinding<R> = { found: true; value?: R } | { found: false };

export function probeEnvelope<R>(finding: ProbeFinding<R> | { failed: unknown }): Seed002Envelope {
  if ("failed" in finding)
    return { outcome: "unknown", effect_applied: "unknown", message: `probe failed: ${messageOf(finding.failed)}` };
  return finding.found
    ? { outcome: "ok", effect_applied: "yes", message: "found by idempotency key" }
    : { outcome: "ok", effect_applied: "no", message: "not found by idempotency key" };
}
