import type { Category } from "../../outcome/vocabulary";
import {
  compact,
  delayHint,
  failureWithoutEvidence,
  flatDetails,
  inputError,
  isRecord,
  pick,
  refusal,
  text,
  withHints,
  type AdapterContext,
  type AdapterResult,
  type DialectAdapter,
  type Hints,
} from "./shared";

// RFC 9457 problem details, with Cloudflare's agent extensions
// (error_code, error_name, error_category, retryable, retry_after, owner_action_required).
// A problem document is always an error, whatever transport status carried it.

function pointerOf(v: Record<string, unknown>): string | null {
  const direct = text(v.pointer) ?? text(v.field);
  if (direct) return direct;
  for (const key of ["invalid-params", "invalid_params", "errors"]) {
    const list = v[key];
    if (Array.isArray(list)) {
      const first = list.find(isRecord);
      if (first) return text(first.pointer) ?? text(first.name) ?? text(first.field) ?? "";
    }
  }
  return null;
}

function codeOf(v: Record<string, unknown>, status: number | null): string | null {
  const explicit = text(v.error_code) ?? text(v.error_name) ?? text(v.code);
  if (explicit) return explicit;
  const type = text(v.type);
  if (type && type !== "about:blank") {
    const tail = type.split(/[/#]/).filter(Boolean).pop();
    if (tail) return tail;
  }
  return status ? `HTTP_${status}` : null;
}

function categoryOf(status: number | null, stated: Category | null): Category | null {
  if (stated) return stated;
  if (status === null) return null;
  if (status === 400 || status === 422) return "validation";
  if (status === 401 || status === 403) return "authorization";
  if (status === 409 || status === 412) return "conflict";
  if (status === 429) return "rate_limit";
  if (status >= 500) return "dependency";
  return null;
}

export const rfc9457Adapter: DialectAdapter = {
  dialect: "rfc9457",
  detect: (v) =>
    (typeof v.title === "string" || typeof v.type === "string") &&
    (typeof v.status === "number" || typeof v.detail === "string"),
  normalize: (v, ctx) => {
    const ignored: Hints = [];
    return withHints(read(v, ctx, delayHint(ctx, v.retry_after, "retry_after", ignored)), ignored);
  },
};

function read(v: Record<string, unknown>, ctx: AdapterContext, notBefore: string | null): AdapterResult {
  const status = typeof v.status === "number" ? v.status : null;
  const pointer = pointerOf(v);
  const common = {
    code: codeOf(v, status),
    category: categoryOf(status, pick.category(v.error_category)),
    agent_message: text(v.detail) ?? text(v.title),
    safe_details: compact({
      ...flatDetails({
        status,
        title: v.title,
        instance: v.instance,
        retryable: v.retryable,
        retry_after: v.retry_after,
      }),
      pointer,
      owner_action_required: typeof v.owner_action_required === "boolean" ? v.owner_action_required : undefined,
    }),
  };

  if (status !== null && status >= 400 && status < 500 && status !== 408) {
    if (status === 429) {
      return refusal({
        ...common,
        outcome: "retryable",
        next_action: "wait_and_retry",
        retry: { directive: "after_delay", not_before: notBefore, max_attempts_remaining: null },
      });
    }
    if (v.owner_action_required === true || status === 401 || status === 403) {
      return refusal({ ...common, retry: { directive: "never", not_before: null, max_attempts_remaining: 0 } });
    }
    if (pointer !== null || status === 400 || status === 422) return inputError(common);
    if (status === 409 || status === 412) return refusal(common);
    return refusal({ ...common, next_action: "choose_alternative" });
  }
  // 5xx, 408, a problem with no status, or a problem inside a 2xx: the
  // document does not say whether the effect landed.
  return failureWithoutEvidence(ctx, {
    ...common,
    retry: ctx.isWrite
      ? { directive: "never", not_before: null, max_attempts_remaining: 0 }
      : { directive: "after_delay", not_before: notBefore, max_attempts_remaining: null },
  });
}
