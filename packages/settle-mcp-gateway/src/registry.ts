import type { CallToolResult } from "./answers.js";
import { refusedBeforeRunning, type UpstreamAnswer } from "./outcomes.js";

// What this gateway process knows about the calls it forwarded, by
// idempotency key: the ones still in flight (an identical call that arrives
// meanwhile waits for the same answer instead of being refused or sent
// twice: the slow success, the client that re-issued after its stream
// broke), and the latest answers (replayed from memory before Settle's
// stored, redacted copy; and the last line of defence while Settle is
// unreachable and a call was let through on fail-open).

/** `unguarded`: sent without Settle's guard (Settle was unreachable), its records still in the spool. */
export type Settled = { invocationId: string; answer: UpstreamAnswer; at: number; unguarded?: boolean };
export type Standing = "committed" | "unknown" | "not_committed";

const RECENT = 2000;

/** What this process may conclude alone, erring towards unknown: an isError result may have done anything. */
export function standingOfAnswer(answer: UpstreamAnswer): Standing {
  if (answer.kind === "lost") return "unknown";
  if (answer.kind === "not_sent" || answer.kind === "refused") return "not_committed";
  if (answer.kind === "error") return refusedBeforeRunning.has(answer.error.code) ? "not_committed" : "unknown";
  if (answer.result.resultType === "input_required") return "not_committed";
  return answer.result.isError === true ? "unknown" : "committed";
}

export type Registry = ReturnType<typeof createRegistry>;

export function createRegistry() {
  const inFlight = new Map<string, { invocationId: string; done: Promise<Settled>; unguarded: boolean }>();
  const recent = new Map<string, Settled>();

  function remember(key: string, settled: Settled): void {
    recent.delete(key);
    recent.set(key, settled);
    if (recent.size > RECENT) recent.delete(recent.keys().next().value as string);
  }

  return {
    /** Marks a call dispatched; `finish` must follow. */
    begin(key: string, invocationId: string, unguarded = false): (settled: Settled) => void {
      let resolve!: (s: Settled) => void;
      const done = new Promise<Settled>((r) => (resolve = r));
      inFlight.set(key, { invocationId, done, unguarded });
      return (settled) => {
        if (inFlight.get(key)?.done === done) inFlight.delete(key);
        remember(key, settled);
        resolve(settled);
      };
    },
    inFlight: (key: string) => inFlight.get(key) ?? null,
    recent: (key: string) => recent.get(key) ?? null,
    /** The stored result of a committed call, for a replay. */
    committedResult(key: string, invocationId: string): CallToolResult | null {
      const s = recent.get(key);
      if (
        !s ||
        s.invocationId !== invocationId ||
        s.answer.kind !== "result" ||
        standingOfAnswer(s.answer) !== "committed"
      )
        return null;
      return s.answer.result as CallToolResult;
    },
    /** Calls still waiting for their server's answer. */
    pending: () => [...inFlight.values()].map((f) => f.done),
  };
}
