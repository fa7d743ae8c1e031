import { classifyResult, type CallResult, type ClassifyContext } from "@settle/client";
import type { ShopResponse } from "./fake-shop";

// The one place where what the shop answered becomes an outcome (source article 002 (docs/outcome-model.md):
// "that mapping is deterministic and belongs in code"). The body decides,
// never the status line alone: a 200 whose body is an error is an error.

type Item = { id: string; applied: "yes" | "no" | "unknown"; reason?: string };

export function classifyShop(result: CallResult<ShopResponse>, context: ClassifyContext): unknown {
  if (result.kind !== "returned") return classifyResult(result, context);
  const { status, headers, body } = result.value;
  const fields = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const attempt_id = context.attemptId;

  if (status === 429 || status === 503) {
    // Refused before anything was written; honour the server's Retry-After.
    const retryAfter = Number(headers["retry-after"]);
    return {
      outcome: "retryable",
      effect_applied: "no",
      attempt_id,
      retry_after_s: Number.isFinite(retryAfter) ? retryAfter : null,
      message: `HTTP ${status}`,
    };
  }
  // An error body in source article 001's (docs/outcome-model.md) five fields, whatever the status: Settle reads it as such.
  if (typeof fields.code === "string") return body;
  if (Array.isArray(fields.items)) {
    const items = (fields.items as Item[]).map(({ id, applied, reason }) => ({
      id,
      applied,
      ...(reason ? { reason } : {}),
    }));
    const done = items.filter((i) => i.applied === "yes").length;
    if (done === items.length) return { outcome: "ok", effect_applied: "yes", attempt_id, items };
    return {
      outcome: "permanent",
      effect_applied: done === 0 ? "no" : "partial",
      attempt_id,
      items,
      message: `${done} of ${items.length} rows written`,
    };
  }
  if (status >= 200 && status < 300) return { outcome: "ok", effect_applied: "yes", attempt_id };
  // A 5xx says nothing about whether a write landed.
  if (status >= 500) return classifyResult({ kind: "threw", error: new Error(`HTTP ${status}`) }, context);
  return { outcome: "permanent", effect_applied: "no", attempt_id, message: `HTTP ${status}` };
}
