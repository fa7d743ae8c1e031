import type { WebhookEvent, WebhookEventData } from "./events";

// The exact bytes a receiver gets. The outbox keeps the event as jsonb, which
// reorders keys; the body is rebuilt in the documented order so that every
// try of a delivery sends the same text (and the example in docs/api.md matches it).

const eventKeys = ["id", "type", "created_at", "data"] as const satisfies ReadonlyArray<keyof WebhookEvent>;
const dataKeys = [
  "invocation_id",
  "status",
  "decision",
  "commit_state",
  "reason",
  "decided_by",
  "decided_at",
  "version",
  "previous_decision",
  "from_status",
  "to_status",
  "not_before",
  "task_id",
  "tool",
  "effect_class",
  "idempotency_key",
  "summary",
  "runtime",
] as const satisfies ReadonlyArray<keyof WebhookEventData>;

function ordered(value: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (key in value) out[key] = value[key];
  // Anything newer than this list still goes out, after the known keys.
  for (const [key, v] of Object.entries(value)) if (!(key in out)) out[key] = v;
  return out;
}

export function bodyOf(payload: unknown): string {
  const event = (payload ?? {}) as Record<string, unknown>;
  const data =
    event.data && typeof event.data === "object"
      ? ordered(event.data as Record<string, unknown>, dataKeys)
      : event.data;
  return JSON.stringify(ordered({ ...event, data }, eventKeys));
}
