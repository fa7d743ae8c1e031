import {
  categorySchema,
  commitStateSchema,
  itemAppliedSchema,
  nextActionSchema,
  retryDirectiveSchema,
  type Category,
  type CommitState,
  type Dialect,
  type Item,
  type NextAction,
  type NormalizedAttempt,
  type RetryDirective,
  type SafeValue,
} from "../vocabulary";

/** What an adapter may know besides the envelope: never I/O, only the record's own facts. */
export type AdapterContext = {
  /** false only for `effect_class: "read"`; an unknown class is treated as a write (SPEC §2). */
  isWrite: boolean;
  /** the record's `at`, ISO 8601; durations in the envelope are counted from it. */
  at: string;
};

/** An adapter's reading; the dialect fields are filled in by lib/ingest/normalize.ts. */
export type AdapterResult = Omit<NormalizedAttempt, "dialect" | "wrapper_dialect">;

export type DialectAdapter = {
  dialect: Dialect;
  detect: (value: Record<string, unknown>) => boolean;
  normalize: (value: Record<string, unknown>, ctx: AdapterContext) => AdapterResult;
};

/** A dialect that wraps another one in a string or a nested object (MCP, Anthropic, OpenAI). */
export type WrapperAdapter = DialectAdapter & {
  /** Candidates for an inner envelope, in the order they should be tried. */
  inner: (value: Record<string, unknown>) => unknown[];
};

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function text(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

export function integer(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) ? value : null;
}

export function seconds(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === "string" && /^\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return null;
}

export function addSeconds(iso: string, s: number): string {
  return new Date(Date.parse(iso) + Math.round(s * 1000)).toISOString();
}

export function isoTime(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export const pick = {
  commitState: (v: unknown): CommitState | null => commitStateSchema.safeParse(v).data ?? null,
  nextAction: (v: unknown): NextAction | null => nextActionSchema.safeParse(v).data ?? null,
  category: (v: unknown): Category | null => categorySchema.safeParse(v).data ?? null,
  directive: (v: unknown): RetryDirective | null => retryDirectiveSchema.safeParse(v).data ?? null,
};

/** Keeps only flat, primitive values: safe_details is an allowlist, never a raw payload. */
export function flatDetails(source: unknown): Record<string, SafeValue> {
  const out: Record<string, SafeValue> = {};
  if (!isRecord(source)) return out;
  for (const [key, value] of Object.entries(source)) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
      out[key] = value as SafeValue;
    } else if (Array.isArray(value) && value.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))) {
      out[key] = value as SafeValue;
    }
  }
  return out;
}

export function compact(details: Record<string, SafeValue | undefined>): Record<string, SafeValue> {
  const out: Record<string, SafeValue> = {};
  for (const [k, v] of Object.entries(details)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

export function readItems(value: unknown): Item[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((item, index) => ({
    item_id: text(item.item_id ?? item.id) ?? String(index),
    applied: itemAppliedSchema.safeParse(item.applied).data ?? "unknown",
    reason: text(item.reason),
  }));
}

/** all yes → committed, all no → not_committed, any mix → partial, nothing known → unknown. */
export function commitFromItems(items: Item[]): CommitState | null {
  if (items.length === 0) return null;
  const yes = items.filter((i) => i.applied === "yes").length;
  const no = items.filter((i) => i.applied === "no").length;
  if (yes === items.length) return "committed";
  if (no === items.length) return "not_committed";
  if (yes === 0 && no === 0) return "unknown";
  return "partial";
}

type Base = AdapterResult;

export function success(extra: Partial<Base> = {}): Base {
  return {
    outcome: "ok",
    commit_state: "committed",
    code: null,
    category: null,
    retry: { directive: "never", not_before: null, max_attempts_remaining: null },
    next_action: "none",
    dispatch_stage: "dispatched",
    safe_details: {},
    agent_message: null,
    user_message: null,
    items: [],
    ...extra,
  };
}

/**
 * A failure whose dialect does not say whether the effect landed. For a write
 * that is an unknown outcome to verify; for a read nothing can have changed.
 */
export function failureWithoutEvidence(ctx: AdapterContext, extra: Partial<Base> = {}): Base {
  const base: Base = ctx.isWrite
    ? {
        ...success(),
        outcome: "unknown",
        commit_state: "unknown",
        retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
        next_action: "verify_operation",
        dispatch_stage: "dispatch_unconfirmed",
      }
    : {
        ...success(),
        outcome: "retryable",
        commit_state: "not_committed",
        retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
        next_action: "wait_and_retry",
        dispatch_stage: null,
      };
  return { ...base, ...extra, retry: { ...base.retry, ...extra.retry } };
}

export function refusal(extra: Partial<Base> = {}): Base {
  return {
    ...success(),
    outcome: "permanent",
    commit_state: "not_committed",
    next_action: "escalate",
    dispatch_stage: null,
    ...extra,
  };
}

export function inputError(extra: Partial<Base> = {}): Base {
  return refusal({
    category: "validation",
    next_action: "correct_input",
    retry: { directive: "after_input_fix", not_before: null, max_attempts_remaining: null },
    ...extra,
  });
}
