import { isRecord } from "../ingest";

// What a tool-call span says about failure besides its status: instrumentations
// often leave the status UNSET (or set OK) on a tool that reported its own
// failure. Each reader returns the failure the span states, in words, or null
// when it states none; a statement of success is not a failure. Pure.
// docs/opentelemetry.md lists every signal read here.

export type StatedFailure = { code: string | null; message: string | null };

/** gen_ai.tool.call.status: these say the call failed; success, ok, succeeded, completed (any case) say it did not. */
const FAILED_STATUSES = new Set(["error", "failed", "failure"]);

export function statusAttributeFailure(status: string | null): StatedFailure | null {
  if (status === null) return null;
  return FAILED_STATUSES.has(status.trim().toLowerCase()) ? { code: status.trim(), message: null } : null;
}

const messageOf = (v: unknown): string | null => {
  if (typeof v === "string" && v.trim() !== "") return v;
  if (isRecord(v) && typeof v.message === "string" && v.message.trim() !== "") return v.message;
  return null;
};
const codeOf = (v: unknown): string | null => (isRecord(v) && typeof v.code === "string" ? v.code : null);

/** A result envelope with success: false, ok: false, or an error member that is set (not null, false or ""). */
export function resultFailure(result: unknown): StatedFailure | null {
  if (!isRecord(result)) return null;
  const error = result.error;
  const hasError = error !== undefined && error !== null && error !== false && error !== "";
  if (result.success !== false && result.ok !== false && !hasError) return null;
  return {
    code: codeOf(error) ?? (typeof result.code === "string" ? result.code : null),
    message: messageOf(error) ?? messageOf(result.message) ?? messageOf(result.reason),
  };
}

/** A serialized LangChain ToolMessage ({lc, type: "constructor", id: [..., "ToolMessage"], kwargs}), bare or under `output`. */
export function toolMessageOf(output: unknown): { content: unknown; status: unknown } | null {
  const message = isRecord(output) && isRecord(output.output) && !("lc" in output) ? output.output : output;
  if (!isRecord(message) || !isRecord(message.kwargs)) return null;
  const id = message.id;
  return Array.isArray(id) && id[id.length - 1] === "ToolMessage"
    ? { content: message.kwargs.content, status: message.kwargs.status }
    : null;
}

/** LangChain's handled tool error: a ToolMessage with status "error" (its content is the error's text). */
export function toolMessageFailure(output: unknown): StatedFailure | null {
  const message = toolMessageOf(output);
  if (message?.status !== "error") return null;
  return { code: "tool_message_error", message: messageOf(message.content) };
}

/** The first failure any reading states. */
export function firstFailure(...stated: Array<StatedFailure | null>): StatedFailure | null {
  return stated.find((s) => s !== null) ?? null;
}
