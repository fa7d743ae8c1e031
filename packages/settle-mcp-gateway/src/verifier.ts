import type { SettleClient, VerificationItem } from "@settle/client";
import type { GatewayConfig } from "./config.js";
import { ruleFor } from "./effects.js";
import type { Dispatch } from "./forward.js";
import { runProbe } from "./probe.js";

// The gateway as its runtime's verifier (Settle's verifiers, decision 027): every rule with a `probe` already
// names the read that tells whether a call took effect, so when Settle asks about an unknown call of such a
// tool, the gateway runs that probe on the server right away — not only when the client re-issues the call.
// A tool whose rule has no probe is answered "could not tell", and Settle asks a person in the end.

export type VerifierOptions = {
  config: GatewayConfig;
  client: Pick<SettleClient, "verifier" | "serveVerifications">;
  dispatch: Dispatch;
  worker: string;
  onError: (message: string) => void;
};

/** Whether any rule can verify: without one, the gateway does not poll Settle for asks. */
export const hasProbes = (config: GatewayConfig) => config.tools.some((rule) => rule.probe !== undefined);

export async function answerWithProbe(options: Pick<VerifierOptions, "config" | "dispatch">, item: VerificationItem) {
  const rule = ruleFor(options.config, item.tool);
  if (!rule?.probe) return { found: null, evidence: `settle-mcp has no probe for ${item.tool}` };
  const timeoutMs = (rule.timeout_s ?? options.config.call_timeout_s) * 1000;
  const finding = await runProbe(
    rule.probe,
    options.dispatch,
    { idempotencyKey: item.idempotency_key ?? "", invocationId: item.invocation_id, args: item.arguments ?? {} },
    timeoutMs,
  );
  if ("found" in finding)
    return {
      found: finding.found,
      evidence: `settle-mcp probe ${rule.probe.tool}: ${rule.probe.found} = ${String(finding.found)}`,
    };
  return {
    found: null,
    evidence: `settle-mcp probe ${rule.probe.tool}: ${"failed" in finding ? finding.failed : finding.unreached}`,
  };
}

/** Starts answering Settle's asks with the rules' probes; `stop` ends the loop. Null when no rule has a probe. */
export function startVerifier(options: VerifierOptions): { stop: () => Promise<void> } | null {
  if (!hasProbes(options.config)) return null;
  options.client.verifier("*", (item) => answerWithProbe(options, item));
  const controller = new AbortController();
  const served = options.client
    .serveVerifications({
      signal: controller.signal,
      worker: options.worker,
      log: (event) => {
        if (event.kind === "answer_refused") options.onError(`verification ${event.item.id}: ${event.error.message}`);
        if (event.kind === "poll_failed")
          options.onError(`asking Settle for verifications failed; again in ${event.retryInMs} ms`);
      },
    })
    .catch((error: unknown) =>
      options.onError(`verifications stopped: ${error instanceof Error ? error.message : String(error)}`),
    );
  return {
    stop: async () => {
      controller.abort();
      await served;
    },
  };
}
