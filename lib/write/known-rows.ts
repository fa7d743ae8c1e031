import type { SqlDriver } from "../db/driver";
import type { InvocationRow } from "./states";
import type { KnownRows } from "./store-records";
import { processWide } from "../process-wide";

// The invocation rows this process wrote last, so the next record of an
// invocation folds onto them without reading them back (one round trip, not
// two). Only a hint: the write checks every row's version and raises if the
// row changed (another process, an operator), and the batch is then folded
// again onto rows read fresh. An invocation not here is taken for a new one,
// which the write checks too. Only rows the write path committed are kept:
// a row is never remembered with a version its database does not have.

const LIMIT = 10_000;
const caches = processWide("knownRows", () => new WeakMap<SqlDriver, Map<string, InvocationRow>>());

const keyOf = (runtimeId: string, invocationId: string) => `${runtimeId} ${invocationId}`;

function cacheOf(driver: SqlDriver): Map<string, InvocationRow> {
  let cache = caches.get(driver);
  if (!cache) caches.set(driver, (cache = new Map()));
  return cache;
}

export function knownRows(driver: SqlDriver, runtimeId: string): KnownRows {
  const cache = cacheOf(driver);
  return (invocationId) => cache.get(keyOf(runtimeId, invocationId)) ?? null;
}

/** Rows just committed; the oldest are dropped beyond the limit. */
export function rememberRows(driver: SqlDriver, runtimeId: string, rows: InvocationRow[]): void {
  const cache = cacheOf(driver);
  for (const row of rows) {
    const key = keyOf(runtimeId, row.invocation_id);
    cache.delete(key);
    cache.set(key, row);
  }
  for (const key of cache.keys()) {
    if (cache.size <= LIMIT) break;
    cache.delete(key);
  }
}

export function forgetRows(driver: SqlDriver, runtimeId: string, invocationIds: string[]): void {
  const cache = cacheOf(driver);
  for (const id of invocationIds) cache.delete(keyOf(runtimeId, id));
}
