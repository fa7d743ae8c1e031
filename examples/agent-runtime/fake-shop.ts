// A fake business system behind the example's tools, with source article 002's (docs/outcome-model.md) "six
// failures worth injecting on purpose". It answers like an HTTP API
// (status, headers, body) and counts every effect it applies, so a test can
// prove that nothing happened twice. Only `send_message`'s receiver
// deduplicates by idempotency key; everywhere else a blind retry would apply
// the effect again — which is what the runtime must never cause.

export type ShopResponse = { status: number; headers: Record<string, string>; body: unknown };

/** One failure, injected into the next request carrying a key. */
export type Failure =
  /** 1. The connection drops mid-call; the effect landed (or not) before it did. */
  | { kind: "kill_mid_call"; lands: boolean }
  /** 2. The network delivers the request twice. */
  | { kind: "duplicate_delivery" }
  /** 4. The answer (and the effect) comes after `ms`; an abort before then cancels it. */
  | { kind: "slow"; ms: number }
  /** 6. 429 with Retry-After; nothing applied. */
  | { kind: "rate_limit"; retryAfterS: number };
// 3 (200 with an error body) and 5 (a partial batch) come from the data: an unknown SKU, a merged cell.

export type Delivery = { op: string; key: string; at: number };

export const CATALOG = new Set(["sku-1", "sku-2", "sku-3"]);
/** A row the sheet refuses for good, and one that is locked the first time it is written. */
export const MERGED_CELL = "row_13";
export const LOCKED_ONCE = "row_15";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

export function createShop(hooks: { onCall?: (call: Delivery) => void } = {}) {
  const applied = new Map<string, unknown[]>();
  const failures = new Map<string, Failure>();
  const locked = new Set([LOCKED_ONCE]);
  const deliveries: Delivery[] = [];

  const ok = (status: number, body: unknown): ShopResponse => ({ status, headers: {}, body });
  function apply(key: string, effect: unknown): unknown {
    applied.set(key, [...(applied.get(key) ?? []), effect]);
    return effect;
  }

  /** Every request goes through here: the injected failure for its key, then the handler (which applies the effect). */
  async function deliver(
    op: string,
    key: string,
    signal: AbortSignal,
    handle: () => ShopResponse,
  ): Promise<ShopResponse> {
    const failure = failures.get(key);
    failures.delete(key);
    const delivery = { op, key, at: Date.now() };
    deliveries.push(delivery);
    hooks.onCall?.(delivery);
    switch (failure?.kind) {
      case "kill_mid_call":
        if (failure.lands) handle();
        throw new Error("socket hang up: the connection closed after the request was sent");
      case "duplicate_delivery":
        handle();
        deliveries.push({ op, key, at: Date.now() });
        return handle();
      case "slow":
        await sleep(failure.ms, signal);
        return handle();
      case "rate_limit":
        return {
          status: 429,
          headers: { "retry-after": String(failure.retryAfterS) },
          body: {
            type: "about:blank",
            title: "Too Many Requests",
            status: 429,
            detail: `Retry after ${failure.retryAfterS} s.`,
          },
        };
      default:
        return handle();
    }
  }

  type Call = { idempotencyKey: string; signal: AbortSignal };

  return {
    inject: (key: string, failure: Failure) => void failures.set(key, failure),
    /** How many times the effect with this key was applied. */
    effects: (key: string) => applied.get(key)?.length ?? 0,
    deliveries: (key?: string) => deliveries.filter((d) => key === undefined || d.key === key),
    /** The probe's lookup: the effect by its idempotency key, if any. */
    findByKey: (key: string) => applied.get(key)?.[0],

    createOrder: (order: { sku: string; quantity: number }, call: Call) =>
      deliver("create_order", call.idempotencyKey, call.signal, () =>
        CATALOG.has(order.sku)
          ? ok(201, apply(call.idempotencyKey, { id: `ord_${call.idempotencyKey.slice(0, 8)}`, ...order }))
          : // 3. The transport succeeded, the operation did not.
            ok(200, {
              code: "INVALID_SKU",
              message: `SKU ${order.sku} does not exist.`,
              retryable: false,
              hint: "Look the SKU up first.",
              field: "sku",
            }),
      ),

    sendMessage: (message: { to: string; text: string }, call: Call) =>
      deliver("send_message", call.idempotencyKey, call.signal, () => {
        // This receiver recognises a repeat by key: one message, and the same ok answer again.
        const sent =
          applied.get(call.idempotencyKey)?.[0] ??
          apply(call.idempotencyKey, { id: `msg_${call.idempotencyKey.slice(0, 8)}`, ...message });
        return ok(200, sent);
      }),

    chargeCard: (charge: { amountCents: number }, call: Call) =>
      deliver("charge_card", call.idempotencyKey, call.signal, () =>
        ok(201, apply(call.idempotencyKey, { id: `ch_${call.idempotencyKey.slice(0, 8)}`, ...charge })),
      ),

    createInvoice: (invoice: { customer: string; amountCents: number }, call: Call) =>
      deliver("create_invoice", call.idempotencyKey, call.signal, () =>
        ok(201, apply(call.idempotencyKey, { id: `in_${call.idempotencyKey.slice(0, 8)}`, ...invoice })),
      ),

    /** 5. Writes rows one by one: a merged cell refuses its row for good; a locked row fails this once. */
    writeRows: (rows: string[], call: Call) =>
      deliver("write_rows", call.idempotencyKey, call.signal, () => {
        const items = rows.map((id) => {
          if (id === MERGED_CELL) return { id, applied: "no" as const, reason: "merged cell", retryable: false };
          if (locked.delete(id)) return { id, applied: "no" as const, reason: "row locked", retryable: true };
          apply(`row:${id}`, { row: id, key: call.idempotencyKey });
          return { id, applied: "yes" as const };
        });
        return ok(207, { items });
      }),
    /** How many times a row was written, under any key. */
    rowWrites: (row: string) => applied.get(`row:${row}`)?.length ?? 0,
  };
}

export type Shop = ReturnType<typeof createShop>;
