// A fake payments provider behind every framework's refund tools, with source
// article 002's failures injected on purpose. It counts every refund it
// applies, by payment, so a test proves each ended with exactly one effect.
// The bulk endpoint answers in the article's own outcome shape (per-item results).

export type RefundArgs = { payment: string; amount: number };
export type Failure =
  /** The request reaches the provider and is lost there: nothing applied, no answer until the caller gives up. */
  | "lost"
  /** The refund is applied, then the caller's process dies: no answer, ever. */
  | "crash"
  /** 429 with Retry-After (RFC 9457, Cloudflare's retry_after): nothing applied. */
  | "rate_limit";

export const MERGED = "pay_merged";
export const LOCKED = "pay_locked";

export function createProvider() {
  const refunds = new Map<string, number>();
  const byKey = new Map<string, string>();
  const failures = new Map<string, Failure>();
  const deliveries: Array<{ payment: string; key: string }> = [];
  const locked = new Set([LOCKED]);
  let onCrash: () => void = () => {};

  const apply = (payment: string, key: string) => {
    refunds.set(payment, (refunds.get(payment) ?? 0) + 1);
    byKey.set(key, `re_${payment}`);
  };
  const never = new Promise<never>(() => {});
  const aborted = (signal?: AbortSignal) =>
    new Promise<never>((_, reject) =>
      signal?.addEventListener("abort", () => reject(new Error("socket hang up: no answer from the provider"))),
    );

  return {
    inject: (payment: string, failure: Failure) => void failures.set(payment, failure),
    /** Called when a "crash" failure has applied its refund: the test kills the agent's process there. */
    onCrash: (fn: () => void) => void (onCrash = fn),
    effects: (payment: string) => refunds.get(payment) ?? 0,
    deliveries: (payment: string) => deliveries.filter((d) => d.payment === payment).length,
    findByKey: (key: string) => byKey.get(key),
    /** A refund of this payment, if one was applied (what a verifier looks up). */
    findRefund: (payment: string) => ((refunds.get(payment) ?? 0) > 0 ? `re_${payment}` : undefined),

    async refund(args: RefundArgs, key: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
      deliveries.push({ payment: args.payment, key });
      const failure = failures.get(args.payment);
      failures.delete(args.payment);
      if (failure === "lost") return aborted(signal);
      if (failure === "crash") {
        apply(args.payment, key);
        onCrash();
        return never;
      }
      if (failure === "rate_limit")
        return {
          type: "about:blank",
          title: "Too Many Requests",
          status: 429,
          detail: "Retry after 3 s.",
          retry_after: 3,
        };
      if (!(args.amount > 0))
        // 200 with an error body (source article 001's five fields).
        return {
          code: "INVALID_AMOUNT",
          message: `Amount ${args.amount} is not positive.`,
          retryable: false,
          hint: "Refund a positive amount.",
          field: "amount",
        };
      apply(args.payment, key);
      return { id: `re_${args.payment}`, status: "succeeded", amount: args.amount };
    },

    async refundBatch(payments: string[], key: string): Promise<Record<string, unknown>> {
      for (const payment of payments) deliveries.push({ payment, key });
      const items = payments.map((id) => {
        if (id === MERGED) return { id, applied: "no" as const, reason: "already refunded elsewhere" };
        if (locked.delete(id)) return { id, applied: "no" as const, reason: "payment locked, try again" };
        apply(id, `${key}:${id}`);
        return { id, applied: "yes" as const };
      });
      const done = items.filter((i) => i.applied === "yes").length;
      return done === items.length
        ? { outcome: "ok", effect_applied: "yes", items }
        : {
            outcome: "permanent",
            effect_applied: done === 0 ? "no" : "partial",
            items,
            message: `${done} of ${items.length} refunds applied`,
          };
    },
  };
}

export type Provider = ReturnType<typeof createProvider>;
