import type { ErrorEnvelope } from "./types.js";

/**
 * A request Settle refused, or one that could not be delivered within the
 * client's retries. `envelope` is Settle's own error envelope when it answered
 * with one; `status` is 0 when no answer came at all.
 */
export class SettleError extends Error {
  readonly status: number;
  readonly code: string;
  readonly envelope: ErrorEnvelope | null;

  constructor(message: string, options: { status: number; code: string; envelope?: ErrorEnvelope | null }) {
    super(message);
    this.name = "SettleError";
    this.status = options.status;
    this.code = options.code;
    this.envelope = options.envelope ?? null;
  }
}

export function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return b.ok === false && typeof b.code === "string" && typeof b.retry === "object" && b.retry !== null;
}
