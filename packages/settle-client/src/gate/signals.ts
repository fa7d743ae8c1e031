import type { CallResult, ClassifyContext, Seed002Envelope } from "../classify.js";

// How a framework adapter turns what a tool did into the envelope it reports
// (docs/outcome-model.md §3). A value in a dialect Settle reads is sent as it
// is, so Settle decides (a 200 whose body is a source article 001 error is an
// error). A value that says it failed without saying whether anything
// happened — `success: false`, `ok: false`, an `error` member — is a failure
// without evidence: unknown for a write, never a success. Anything else a
// tool returned is done. A throw or a timeout of a write is unknown.
// Settle's OTLP ingest reads the same signals from spans (lib/otlp); this
// package keeps its own copy, as it is published alone.

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const outcomes = new Set(["ok", "retryable", "permanent", "unknown"]);

/** A returned value in one of the dialects Settle reads (its own, the five articles', RFC 9457, MCP, Anthropic, OpenAI). */
export function isKnownEnvelope(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  if (typeof value.ok === "boolean" && typeof value.commit_state === "string") return true;
  if (typeof value.outcome === "string" && outcomes.has(value.outcome) && "effect_applied" in value) return true;
  if (typeof value.code === "string" && typeof value.retryable === "boolean" && "message" in value) return true;
  if (value.kind === "tool_error") return true;
  if (typeof value.title === "string" && typeof value.status === "number" && ("type" in value || "detail" in value))
    return true;
  if (Array.isArray(value.content) && typeof value.isError === "boolean") return true;
  return value.type === "tool_result" || value.type === "function_call_output";
}

const text = (v: unknown): string | null => {
  if (typeof v === "string" && v.trim() !== "") return v.slice(0, 500);
  if (isRecord(v) && typeof v.message === "string") return v.message.slice(0, 500);
  return null;
};

/** The failure a returned value states, in words (null when it states none): success false, ok false, an error member. */
export function failureSignal(value: unknown): string | null {
  if (!isRecord(value)) return null;
  const error = value.error;
  const hasError = error !== undefined && error !== null && error !== false && error !== "";
  if (value.success === false || value.ok === false || hasError)
    return text(error) ?? text(value.message) ?? (value.success === false ? "success: false" : "ok: false");
  return null;
}

/**
 * The default reading of one call. `readAs` gives what a returned value says in plain terms, for a framework that
 * wraps results (LangChain's ToolMessage: its content, and `{ error }` when its status is "error").
 */
export function classifyCall<R>(
  result: CallResult<R>,
  context: ClassifyContext & { unclassified: boolean },
  readAs?: (value: R) => unknown,
): unknown {
  const attempt_id = context.attemptId;
  const write = context.effectClass !== "read" || context.unclassified;
  const failure = (message: string): Seed002Envelope =>
    write
      ? { outcome: "unknown", effect_applied: "unknown", attempt_id, message }
      : { outcome: "retryable", effect_applied: "no", attempt_id, message };
  if (result.kind === "threw") {
    const error = result.error;
    return failure((error instanceof Error ? error.message : String(error)).slice(0, 500));
  }
  if (result.kind === "timed_out") return failure(`no answer within ${result.afterMs} ms; the call may still complete`);
  const value = jsonObjectOrSelf(readAs ? readAs(result.value) : result.value);
  if (isKnownEnvelope(value)) return value;
  const signal = failureSignal(value);
  if (signal !== null) return failure(signal);
  return { outcome: "ok", effect_applied: "yes", attempt_id };
}

/** A string holding a JSON object is read as that object (tools often return JSON text); anything else as it is. */
function jsonObjectOrSelf(value: unknown): unknown {
  if (typeof value !== "string" || !value.trimStart().startsWith("{")) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : value;
  } catch {
    return value;
  }
}

/** Whether an envelope this package wrote says the outcome is unknown (a known dialect is left to Settle to read). */
export function saysUnknown(envelope: unknown): boolean {
  return isRecord(envelope) && envelope.outcome === "unknown" && envelope.effect_applied === "unknown";
}
