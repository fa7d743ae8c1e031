import {
  categorySchema,
  commitStateSchema,
  dispatchStageSchema,
  effectClassSchema,
  itemAppliedSchema,
  memberOf,
  nextActionSchema,
  outcomeSchema,
  retryDirectiveSchema,
  type Category,
  type CommitState,
  type Dialect,
  type Item,
  type NextAction,
  type NormalizedAttempt,
  type RetryDirective,
  type SafeValue,
  type IgnoredHint,
} from "../../outcome/vocabulary";
import { storableCount } from "../../db/storable";
import { CALLER_TIME_RANGE, callerTimeIso } from "../../outcome/record-fields";

/** What an adapter may know besides the envelope: never I/O, only the record's own facts. */
export type AdapterContext = {
  /** false only for `effect_class: "read"`; an unknown class is treated as a write (docs/outcome-model.md §2). */
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

/** `iso` plus `s` seconds, or null when the result is not a time Settle takes (CALLER_TIME_MIN…CALLER_TIME_MAX). */
export function addSeconds(iso: string, s: number): string | null {
  return callerTimeIso(Date.parse(iso) + Math.round(s * 1000));
}

/**
 * Reading hints (a retry delay, a retry time, a count) from an envelope: a
 * value that is present but unusable — too far in the future, too large,
 * unreadable — is left out of the reading and named in `ignored`, never an error.
 */
export type Hints = IgnoredHint[];

/** The time `raw` seconds after the record's `at`. */
export function delayHint(ctx: AdapterContext, raw: unknown, field: string, ignored: Hints): string | null {
  if (raw === undefined || raw === null) return null;
  const s = seconds(raw);
  const at = s === null ? null : addSeconds(ctx.at, s);
  if (at === null)
    ignored.push({
      field,
      reason: s === null ? "not a number of seconds" : `${s} s after the record's time is beyond what Settle takes`,
    });
  return at;
}

/** An ISO 8601 time. */
export function timeHint(raw: unknown, field: string, ignored: Hints): string | null {
  if (raw === undefined || raw === null) return null;
  const at = typeof raw === "string" ? callerTimeIso(Date.parse(raw)) : null;
  if (at === null) ignored.push({ field, reason: `not an ISO 8601 date-time ${CALLER_TIME_RANGE}` });
  return at;
}

/** A count: a whole number from 0 to 2^31 - 1. */
export function countHint(raw: unknown, field: string, ignored: Hints): number | null {
  if (raw === undefined || raw === null) return null;
  if (storableCount(raw)) return raw;
  ignored.push({ field, reason: "not a whole number from 0 to 2147483647" });
  return null;
}

/** Attaches the hints an adapter could not use to its reading. */
export function withHints<T extends object>(result: T, ignored: Hints): T & { ignored?: IgnoredHint[] } {
  return ignored.length > 0 ? { ...result, ignored } : result;
}

export const pick = {
  commitState: memberOf<CommitState>(commitStateSchema),
  nextAction: memberOf<NextAction>(nextActionSchema),
  category: memberOf<Category>(categorySchema),
  directive: memberOf<RetryDirective>(retryDirectiveSchema),
  applied: memberOf(itemAppliedSchema),
  dispatchStage: memberOf(dispatchStageSchema),
  outcome: memberOf(outcomeSchema),
  effectClass: memberOf(effectClassSchema),
};

/** Keeps only flat, primitive values: safe_details is an allowlist, never a raw payload. */
const primitive = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);

// Built with fromEntries, which defines own properties: a key such as "__proto__" stays data.
export function flatDetails(source: unknown): Record<string, SafeValue> {
  if (!isRecord(source)) return {};
  return Object.fromEntries(
    Object.entries(source).filter(([, v]) => primitive(v) || (Array.isArray(v) && v.every(primitive))),
  ) as Record<string, SafeValue>;
}

export function compact(details: Record<string, SafeValue | undefined>): Record<string, SafeValue> {
  return Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined && v !== null)) as Record<
    string,
    SafeValue
  >;
}

/** A value of a closed table, looked up by text from an envelope: own entries only, so "toString" finds nothing. */
export function lookup<T>(table: Readonly<Record<string, T>>, key: string | null): T | null {
  return key !== null && Object.hasOwn(table, key) ? table[key]! : null;
}

export function readItems(value: unknown): Item[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((item, index) => ({
    item_id: text(item.item_id ?? item.id) ?? String(index),
    applied: pick.applied(item.applied) ?? "unknown",
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

// Object.assign, not `{ ...a, ...b }`: these run for every record ingested,
// and V8 copies an object literal with a spread after other properties
// several times slower (bench: npm run bench:otlp; a profile showed it).
export function success(extra: Partial<Base> = {}): Base {
  return Object.assign(
    {
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
    } satisfies Base,
    extra,
  );
}

/**
 * A failure whose dialect does not say whether the effect landed. For a write
 * that is an unknown outcome to verify; for a read nothing can have changed.
 */
export function failureWithoutEvidence(ctx: AdapterContext, extra: Partial<Base> = {}): Base {
  const base: Partial<Base> = ctx.isWrite
    ? {
        outcome: "unknown",
        commit_state: "unknown",
        retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
        next_action: "verify_operation",
        dispatch_stage: "dispatch_unconfirmed",
      }
    : {
        outcome: "retryable",
        commit_state: "not_committed",
        retry: { directive: "after_delay", not_before: null, max_attempts_remaining: null },
        next_action: "wait_and_retry",
        dispatch_stage: null,
      };
  const retry = extra.retry ? Object.assign(base.retry!, extra.retry) : base.retry!;
  return Object.assign(success(base), extra, { retry });
}

export function refusal(extra: Partial<Base> = {}): Base {
  return Object.assign(
    success({ outcome: "permanent", commit_state: "not_committed", next_action: "escalate", dispatch_stage: null }),
    extra,
  );
}

export function inputError(extra: Partial<Base> = {}): Base {
  return refusal({
    category: "validation",
    next_action: "correct_input",
    retry: { directive: "after_input_fix", not_before: null, max_attempts_remaining: null },
    ...extra,
  });
}

/** A write-ahead intent: nothing is known yet, by construction, whoever wrote it (a record or a span's start). */
export function writeAheadIntent(
  dialect: NormalizedAttempt["dialect"],
  safeDetails: NormalizedAttempt["safe_details"] = {},
): NormalizedAttempt {
  return {
    dialect,
    wrapper_dialect: null,
    outcome: "unknown",
    commit_state: "unknown",
    code: null,
    category: null,
    retry: { directive: "never", not_before: null, max_attempts_remaining: null },
    next_action: "none",
    dispatch_stage: "pre_dispatch",
    safe_details: safeDetails,
    agent_message: null,
    user_message: null,
    items: [],
  };
}
