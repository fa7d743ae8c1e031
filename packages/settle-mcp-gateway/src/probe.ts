import type { ToolRule } from "./config.js";
import type { Dispatch, ToolCallParams } from "./forward.js";
import { readPath } from "./identity.js";
import type { UpstreamAnswer } from "./outcomes.js";

// Seed 002: a retry is a guess, a probe is a measurement. Before an identical
// call is sent again after an outcome nobody knows, the gateway asks the
// server itself whether the effect exists, with the read the configuration
// names (get_order by idempotency key), and reports what it found as a probe
// record: found settles the invocation committed (a duplicate prevented),
// absent settles it not committed (the call may go with the same key), and
// anything else leaves it unknown for a person.

export type ProbeFinding = { found: boolean } | { failed: string } | { unreached: string };

type Probe = NonNullable<ToolRule["probe"]>;

/** Fills {{idempotency_key}}, {{invocation_id}} and {{args.<path>}} in the probe's arguments. */
export function probeArguments(
  probe: Probe,
  values: { idempotencyKey: string; invocationId: string; args: unknown },
): Record<string, unknown> {
  const fill = (value: unknown): unknown => {
    if (typeof value === "string") {
      const whole = /^\{\{args\.([^}]+)\}\}$/.exec(value);
      if (whole) return readPath(values.args, whole[1]!) ?? null;
      return value
        .replaceAll("{{idempotency_key}}", values.idempotencyKey)
        .replaceAll("{{invocation_id}}", values.invocationId)
        .replace(/\{\{args\.([^}]+)\}\}/g, (_, p: string) => String(readPath(values.args, p) ?? ""));
    }
    if (Array.isArray(value)) return value.map(fill);
    if (value !== null && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    return value;
  };
  return fill(probe.arguments) as Record<string, unknown>;
}

export function readFinding(probe: Probe, answer: UpstreamAnswer): ProbeFinding {
  if (answer.kind === "not_sent" || answer.kind === "refused") return { unreached: answer.detail };
  if (answer.kind !== "result")
    return { failed: answer.kind === "error" ? `JSON-RPC error ${answer.error.code}` : `no answer (${answer.kind})` };
  if (answer.result.isError === true) return { failed: "the probe answered with an error" };
  const found = readPath(answer.result.structuredContent, probe.found);
  return typeof found === "boolean"
    ? { found }
    : { failed: `the probe's structuredContent has no boolean ${probe.found}` };
}

/** The probe record's envelope: Settle's own, committed when found, not committed when absent, unknown when the probe failed. */
export function probeEnvelope(tool: string, finding: Exclude<ProbeFinding, { unreached: string }>) {
  const base = { retry: { directive: "never", not_before: null, max_attempts_remaining: null }, safe_details: {} };
  if ("failed" in finding) {
    const message = `settle-mcp probe of ${tool} failed: ${finding.failed}`;
    return {
      ok: false,
      code: "PROBE_FAILED",
      category: "dependency",
      commit_state: "unknown",
      next_action: "verify_operation",
      ...base,
      agent_message: message,
      user_message: message,
    };
  }
  const message = finding.found
    ? `settle-mcp probe: ${tool} took effect (found by idempotency key)`
    : `settle-mcp probe: ${tool} did not take effect (not found)`;
  return finding.found
    ? { ok: true, commit_state: "committed", ...base, agent_message: message, user_message: message }
    : {
        ok: false,
        code: "NOT_FOUND",
        category: "conflict",
        commit_state: "not_committed",
        next_action: "wait_and_retry",
        ...base,
        retry: { directive: "allowed", not_before: null, max_attempts_remaining: null },
        agent_message: message,
        user_message: message,
      };
}

export async function runProbe(
  probe: Probe,
  dispatch: Dispatch,
  values: { idempotencyKey: string; invocationId: string; args: unknown },
  timeoutMs: number,
): Promise<ProbeFinding> {
  const params: ToolCallParams = { name: probe.tool, arguments: probeArguments(probe, values) };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<UpstreamAnswer>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "lost", why: "timeout", detail: "probe timed out" }), timeoutMs);
  });
  const answer = await Promise.race([dispatch(params), timedOut]);
  clearTimeout(timer);
  return readFinding(probe, answer);
}
